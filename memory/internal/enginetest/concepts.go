package enginetest

import (
	"context"
	"strings"

	"github.com/acolyte-dev/acolyte/memory"
)

// concepts is an embedder whose vector space is a few hand-made concepts,
// so that a test knows which memories a query's vector lies near without
// sharing a word with them.
type concepts struct{ model string }

// Concepts returns the test embedder under a model name; two names give
// the same vectors but must never be compared.
func Concepts(model string) memory.Embedder { return concepts{model} }

var conceptWords = [][]string{
	{"bastion", "jump", "host", "staging", "ssh"},
	{"coffee", "tea", "cupboard", "kitchen"},
	{"release", "changes", "notes", "deploy"},
	{"office", "closes", "six", "hours"},
}

func (c concepts) Model() string { return c.model }
func (c concepts) Dim() int      { return len(conceptWords) + 1 }

func (c concepts) Embed(_ context.Context, _ memory.Purpose, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, c.Dim())
		v[len(conceptWords)] = 0.1 // no text is the zero vector
		for _, w := range memory.Words(text) {
			for d, ws := range conceptWords {
				for _, cw := range ws {
					if strings.HasPrefix(w, cw) {
						v[d]++
					}
				}
			}
		}
		memory.Normalize32(v)
		out[i] = v
	}
	return out, nil
}
