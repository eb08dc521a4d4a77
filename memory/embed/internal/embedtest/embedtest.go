// Package embedtest holds what the remote embedders' tests share: the
// texts they send, the vectors their fake servers answer with, and a
// retry clock that records instead of sleeping.
package embedtest

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// Texts returns n distinct texts, "x", "xx", and so on.
func Texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat("x", i+1)
	}
	return out
}

// VectorFor is the vector a fake server answers for text: unnormalised,
// and different for texts of different lengths, so a reordered batch
// shows.
func VectorFor(text string, dim int) []float32 {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(len(text) + j)
	}
	return v
}

// AssertUnitVectorsFor fails t unless got holds, in order, the unit-length
// VectorFor of each text in in.
func AssertUnitVectorsFor(t testing.TB, got [][]float32, in []string, dim int) {
	t.Helper()
	if len(got) != len(in) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(in))
	}
	for i, v := range got {
		want := VectorFor(in[i], dim)
		memory.Normalize32(want)
		if len(v) != dim {
			t.Fatalf("vector %d has %d dimensions, want %d", i, len(v), dim)
		}
		for j := range v {
			if math.Abs(float64(v[j]-want[j])) > 1e-6 {
				t.Fatalf("vector %d = %v, want the unit vector %v", i, v, want)
			}
		}
	}
}

// Sleeps stands in for the retry policy's sleep: it records each wait and
// returns at once.
type Sleeps struct{ Waits []time.Duration }

func (s *Sleeps) Sleep(_ context.Context, d time.Duration) error {
	s.Waits = append(s.Waits, d)
	return nil
}
