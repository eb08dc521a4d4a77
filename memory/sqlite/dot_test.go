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

// The four-vector kernel must give each vector exactly what dot8 gives
// it, so that a search's cosines, and so its ranking, do not change.
func TestDot8x4MatchesDot8(t *testing.T) {
	if !haveDotAVX2 {
		t.Skip("no AVX2 kernel on this CPU")
	}
	r := rand.New(rand.NewPCG(3, 5))
	for n := 8; n <= 392; n += 8 {
		query := make([]float32, n)
		for i := range query {
			query[i] = float32(r.NormFloat64())
		}
		var qs [4][]int8
		for v := range qs {
			qs[v] = make([]int8, n)
			for i := range qs[v] {
				qs[v][i] = int8(r.IntN(255) - 127)
			}
		}
		var got [4]float32
		dot8x4AVX2(&query[0], &qs[0][0], &qs[1][0], &qs[2][0], &qs[3][0], n, &got)
		for v := range qs {
			if want := dot8(query, qs[v]); math.Float32bits(got[v]) != math.Float32bits(want) && got[v] != want {
				t.Fatalf("n=%d, vector %d: dot8x4 = %v, dot8 = %v", n, v, got[v], want)
			}
		}
	}
}

// BenchmarkCosines100k is the vector side's pass over 100k memories of
// 256 dimensions, the built-in embedder's.
func BenchmarkCosines100k(b *testing.B) {
	const n, dim = 100_000, 256
	r := rand.New(rand.NewPCG(1, 2))
	c := &catalog{dim: dim, vecAt: make([]int32, n), scales: make([]float32, n), vecs: make([]int8, n*dim)}
	at := make([]int32, n)
	for i := range n {
		c.vecAt[i], c.scales[i], at[i] = int32(i), 1/127.0, int32(i)
	}
	for i := range c.vecs {
		c.vecs[i] = int8(r.IntN(255) - 127)
	}
	query := make([]float32, dim)
	for i := range query {
		query[i] = float32(r.NormFloat64())
	}
	for b.Loop() {
		cosines(query, c, at)
	}
}
