package sqlite

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// passOver hands memory.Score only the 2·CandidatePool memories whose
// vectors lie furthest above the crowd, and turns most memories away by a
// float32 cut (cosineAt) before it works out their z-scores, so that the
// pass runs beside the lexical lookups at little cost. Handed every memory
// above the crowd instead, Score must choose the same candidates and give
// them the same scores, the lexical candidates among the vector side's
// best included.
func TestPassOverKeepsWhatScoreChooses(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		n := 1 + r.IntN(600)
		c := &catalog{dim: 1, scopes: []memory.Scope{memory.ScopeUser}, keys: []string{""}}
		var seq int64
		for range n {
			seq += 1 + r.Int64N(3)
			c.seqs = append(c.seqs, seq)
			c.groups = append(c.groups, 0)
			c.kinds = append(c.kinds, 1)
			if r.IntN(8) == 0 {
				c.vecAt = append(c.vecAt, -1) // a memory without a vector
				continue
			}
			c.vecAt = append(c.vecAt, int32(len(c.scales)))
			c.scales = append(c.scales, 1)
			c.vecs = append(c.vecs, 0)
		}
		v := c.view(memory.Visibility{}, memory.Filter{}, nil)
		// Few distinct cosines, so that many tie at the pool's edge.
		cos := make([]float32, len(v.withVec))
		levels := 1 + r.IntN(12)
		for j := range cos {
			cos[j] = float32(r.IntN(levels)) / float32(levels)
			if round%2 == 1 {
				cos[j] = 2*r.Float32() - 1
			}
		}
		// Lexical candidates drawn from everywhere, the vector side's best
		// included, at most a pool of them, as lexical gives.
		lex := lexicalMatch{exact: make([]float64, n)}
		top := memory.NewTopN[int64](memory.CandidatePool)
		for range r.IntN(2 * memory.CandidatePool) {
			i := r.IntN(n)
			lex.exact[i] = float64(1 + r.IntN(3))
			top.Push(c.seqs[i], lex.exact[i])
		}
		lex.top = top.Best()

		pass := passOver(cos, v)
		every := pass
		every.above = nil
		if mean, spread := memory.MeanDeviation(cos); spread > 0 {
			for j, i := range v.withVec {
				if z := (float64(cos[j]) - mean) / spread; z > 0 {
					every.above = append(every.above, memory.Hit[int64]{Key: c.seqs[i], Score: z})
				}
			}
		}
		slices.SortFunc(every.above, func(a, b memory.Hit[int64]) int {
			if a.Score != b.Score {
				return cmp.Compare(b.Score, a.Score)
			}
			return cmp.Compare(a.Key, b.Key)
		})
		for _, noFloor := range []bool{true, false} {
			q := memory.Query{Text: "a search", NoFloor: noFloor, Filter: memory.Filter{Limit: memory.MaxLimit}}
			got := memory.Score(q, []memory.TextEvidence[int64]{textEvidence(lex, pass, v, nil)}, nil, nil)
			want := memory.Score(q, []memory.TextEvidence[int64]{textEvidence(lex, every, v, nil)}, nil, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d (%d memories, %d lexical, no floor %v): from passOver Score chose\n%v\nfrom every memory above the crowd\n%v",
					round, n, len(lex.top), noFloor, got, want)
			}
		}
	}
}

// cosineAt must never turn away a memory whose z-score is high enough:
// the lowest float32 cosine that reaches z lies at or above it.
func TestCosineAtIsNeverAboveACosineThatReaches(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		p := vectorPass{mean: 2*r.Float64() - 1, spread: r.Float64() * 2}
		if r.IntN(4) == 0 {
			p.mean = -p.spread * float64(r.IntN(4)) // z*spread may cancel the mean
		}
		z := float64(r.IntN(5))
		if r.IntN(2) == 0 {
			z = 5 * r.Float64()
		}
		if p.spread == 0 {
			continue
		}
		reaches := func(c float32) bool { return (float64(c)-p.mean)/p.spread >= z }
		lowest := lowestFloat32(reaches)
		if cut := p.cosineAt(z); cut > lowest {
			t.Fatalf("mean %v, spread %v: cosineAt(%v) = %v, above %v, which reaches it", p.mean, p.spread, z, cut, lowest)
		}
	}
}

// lowestFloat32 is the lowest finite float32 for which the monotone test
// holds, by binary search over the float32s in their order.
func lowestFloat32(holds func(float32) bool) float32 {
	// order numbers the float32s from the lowest up: -0 and +0 alike.
	order := func(f float32) int64 {
		b := math.Float32bits(f)
		if b>>31 == 1 {
			return -int64(b &^ (1 << 31))
		}
		return int64(b)
	}
	float := func(o int64) float32 {
		if o < 0 {
			return math.Float32frombits(uint32(-o) | 1<<31)
		}
		return math.Float32frombits(uint32(o))
	}
	lo, hi := order(-math.MaxFloat32), order(math.MaxFloat32)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if holds(float(mid)) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return float(lo)
}
