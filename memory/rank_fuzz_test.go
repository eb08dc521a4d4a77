package memory_test

import (
	"math"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// FuzzRank feeds Rank what an engine might: held positions out of range
// or repeated, kin that are also held, identifier wholes, vectors of
// other sizes, zero vectors, no query vector, with and without the
// floor. It must never panic, and every score must lie in (0, 1] and
// belong to a doc that was given.
func FuzzRank(f *testing.F) {
	f.Add([]byte{3, 1, 0, 2, 5, 1, 1}, uint8(4), uint8(4), uint8(2))
	f.Add([]byte{0, 0, 0}, uint8(0), uint8(3), uint8(1))
	f.Add([]byte{9, 255, 7, 7, 7, 128}, uint8(2), uint8(5), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, ndocs, dim, nterms uint8) {
		n := int(ndocs % 64)
		d := int(dim % 8)
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		vec := func() []float32 {
			size := d
			switch next() % 5 {
			case 0:
				return nil
			case 1:
				size = d + 1 // another model's size
			}
			v := make([]float32, size)
			for i := range v {
				v[i] = float32(int8(next())) / 16
			}
			memory.Normalize32(v)
			return v
		}
		docs := make([]memory.RankDoc, n)
		for i := range docs {
			docs[i].Vec = vec()
		}
		terms := make([]memory.RankTerm, int(nterms%6))
		for i := range terms {
			for range int(next() % 8) {
				terms[i].Held = append(terms[i].Held, int(int8(next())))
			}
			for range int(next() % 4) {
				terms[i].Kin = append(terms[i].Kin, int(int8(next())))
			}
			terms[i].Whole = next()%4 == 0
			terms[i].Vec = vec()
		}
		var query []float32
		if d > 0 {
			query = vec()
		}
		for at, score := range rank(docs, terms, query, next()%2 == 0, nil) {
			if at < 0 || at >= n {
				t.Fatalf("a score for doc %d of %d", at, n)
			}
			if !(score > 0 && score <= 1+1e-9) || math.IsNaN(score) {
				t.Fatalf("doc %d scored %v", at, score)
			}
		}
	})
}
