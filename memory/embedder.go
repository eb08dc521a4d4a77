package memory

import (
	"context"
	"math"
)

// Purpose tells an embedder whether it is placing a stored document or a
// search query. Asymmetric models (Gemini's task types) embed the two
// differently; symmetric ones ignore it.
type Purpose int

const (
	PurposeDocument Purpose = iota
	PurposeQuery
)

// Embedder turns text into vectors.
//
// Model must identify the vector space exactly (provider, model and
// dimension), because the store never compares vectors whose Model differs.
type Embedder interface {
	Model() string
	Dim() int
	Embed(ctx context.Context, purpose Purpose, texts []string) ([][]float32, error)
}

// Normalize32 scales v to unit length in place so that a dot product is a
// cosine. A zero vector stays zero.
func Normalize32(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}

// Layered is an embedder whose vectors are worth waiting for but cost too
// much to make for many memories at once, paired with an instant one
// whose vectors stand in meanwhile. A store gives every memory written
// the instant vector at once and the model's when it can, and a search
// runs in the model's space once every memory it sees has that vector.
type Layered interface {
	Embedder
	// Instant is the embedder of the stand-in vectors.
	Instant() Embedder
}

// WithInstant pairs model with instant as a Layered embedder.
func WithInstant(model, instant Embedder) Layered { return layered{model, instant} }

type layered struct {
	Embedder
	instant Embedder
}

func (l layered) Instant() Embedder { return l.instant }
