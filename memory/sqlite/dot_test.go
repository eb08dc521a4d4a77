package sqlite

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The vector kernel must agree with the plain loop for every length,
// including lengths that leave a remainder for the Go tail.
func TestDot8MatchesPlainGo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for n := range 300 {
		query := make([]float32, n)
		q := make([]int8, n+3) // longer, as a stored vector may be
		for i := range query {
			query[i] = float32(r.NormFloat64())
		}
		for i := range q {
			q[i] = int8(r.IntN(255) - 127)
		}
		got, want := float64(dot8(query, q)), float64(dot8Go(query, q))
		if math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
			t.Fatalf("n=%d: dot8 = %v, plain Go = %v", n, got, want)
		}
	}
}

func BenchmarkDot8(b *testing.B) {
	query := make([]float32, 100)
	q := make([]int8, 100)
	for i := range query {
		query[i], q[i] = float32(i)/100, int8(i-50)
	}
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			dot8(query, q)
		}
	})
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			dot8Go(query, q)
		}
	})
}
