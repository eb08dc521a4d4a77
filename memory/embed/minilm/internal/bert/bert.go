// Package bert runs a BERT encoder (Devlin et al., 2019) of the
// sentence-transformers kind: WordPiece tokens in, the mean of the last
// layer's token states out, normalised. It holds the model's file format,
// which internal/gen writes and the embedder reads in place, and the
// forward pass, whose products run in memory/embed/internal/gemm.
package bert

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/memory/embed/internal/gemm"
	"github.com/acolyte-dev/acolyte/memory/embed/internal/wordpiece"
)

// Config is the shape of a model and the ids of its special tokens.
type Config struct {
	Name         string  `json:"name"`
	Layers       int     `json:"layers"`
	Hidden       int     `json:"hidden"`
	Heads        int     `json:"heads"`
	Intermediate int     `json:"intermediate"`
	MaxTokens    int     `json:"max_tokens"`
	Vocab        int     `json:"vocab"`
	VocabBytes   int     `json:"vocab_bytes"`
	CLS          int     `json:"cls"`
	SEP          int     `json:"sep"`
	UNK          int     `json:"unk"`
	Eps          float32 `json:"eps"`
}

func (c Config) check() error {
	switch {
	case c.Layers < 1 || c.Layers > 48, c.Heads < 1, c.Hidden%c.Heads != 0,
		c.Hidden%gemm.Panel != 0, c.Intermediate%gemm.Panel != 0, c.MaxTokens < 3,
		c.Vocab < 1 || c.Vocab > math.MaxUint16+1, c.VocabBytes < c.Vocab,
		c.CLS < 0 || c.CLS >= c.Vocab, c.SEP < 0 || c.SEP >= c.Vocab, c.UNK < 0 || c.UNK >= c.Vocab:
		return fmt.Errorf("bert: config %+v is not a model this code runs", c)
	}
	return nil
}

// Model is an encoder's weights.
type Model struct {
	Config
	vocab vocab
	// Words is the token embedding table, int8 with a scale per token.
	Words     []int8
	WordScale []float32
	// Positions holds the position embeddings with the token-type
	// embedding of segment 0, the only one a single text uses, added in.
	Positions []float32
	Norm      LayerNorm
	Layers    []Layer
}

// Layer is one transformer block. QKV is the query, key and value
// projections side by side, so one product computes all three.
type Layer struct {
	QKV, Out, Up, Down Linear
	Norm1, Norm2       LayerNorm
}

// Linear is y = x·W + Bias.
type Linear struct {
	W    gemm.Q8
	Bias []float32
}

// LayerNorm is a layer normalisation's gain and bias.
type LayerNorm struct {
	Gain, Bias []float32
}

func (m *Model) check() error {
	for i := range m.Layers {
		l := &m.Layers[i]
		for _, lin := range []*Linear{&l.QKV, &l.Out, &l.Up, &l.Down} {
			if err := lin.W.Check(); err != nil {
				return fmt.Errorf("bert: layer %d: %w", i, err)
			}
		}
	}
	return m.vocab.check()
}

// SetVocab sets the model's vocabulary, tokens in id order.
func (m *Model) SetVocab(tokens []string) error {
	v, err := newVocab(tokens)
	if err != nil {
		return err
	}
	m.vocab = v
	m.Vocab, m.VocabBytes = len(tokens), len(v.tokens)
	return nil
}

// Tokenize returns the ids the model reads for text: [CLS], its
// WordPiece tokens, [SEP], cut to MaxTokens as the model was trained.
func (m *Model) Tokenize(text string) []int {
	ids := append([]int{m.CLS}, wordpiece.TokenizeUnknown(&m.vocab, text, m.UNK)...)
	if len(ids) > m.MaxTokens-1 {
		ids = ids[:m.MaxTokens-1]
	}
	return append(ids, m.SEP)
}

// Token is the text of token id.
func (m *Model) Token(id int) string { return m.vocab.token(id) }

// vocab finds tokens by binary search over ids sorted by their text, so
// nothing is built when a process starts.
type vocab struct {
	tokens  string   // every token, in id order, back to back
	offsets []uint32 // token i is tokens[offsets[i]:offsets[i+1]]
	sorted  []uint16 // ids in the order of their tokens' bytes
}

func newVocab(tokens []string) (vocab, error) {
	if len(tokens) > math.MaxUint16+1 {
		return vocab{}, fmt.Errorf("bert: %d tokens, at most %d", len(tokens), math.MaxUint16+1)
	}
	var b strings.Builder
	v := vocab{offsets: make([]uint32, 0, len(tokens)+1), sorted: make([]uint16, len(tokens))}
	for i, t := range tokens {
		v.offsets = append(v.offsets, uint32(b.Len()))
		b.WriteString(t)
		v.sorted[i] = uint16(i)
	}
	v.offsets = append(v.offsets, uint32(b.Len()))
	v.tokens = b.String()
	slices.SortFunc(v.sorted, func(a, b uint16) int { return strings.Compare(v.token(int(a)), v.token(int(b))) })
	return v, v.check()
}

func (v *vocab) token(id int) string { return v.tokens[v.offsets[id]:v.offsets[id+1]] }

func (v *vocab) check() error {
	n := len(v.sorted)
	if len(v.offsets) != n+1 || int(v.offsets[n]) != len(v.tokens) {
		return errors.New("bert: vocabulary offsets do not match its tokens")
	}
	for i := range n {
		if v.offsets[i] > v.offsets[i+1] || int(v.sorted[i]) >= n {
			return errors.New("bert: vocabulary is damaged")
		}
		if i > 0 && v.token(int(v.sorted[i-1])) >= v.token(int(v.sorted[i])) {
			return errors.New("bert: vocabulary is not sorted, or repeats a token")
		}
	}
	return nil
}

// Find implements wordpiece.Vocabulary.
func (v *vocab) Find(token string) int {
	lo, hi := 0, len(v.sorted)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if v.token(int(v.sorted[mid])) < token {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(v.sorted) && v.token(int(v.sorted[lo])) == token {
		return int(v.sorted[lo])
	}
	return -1
}
