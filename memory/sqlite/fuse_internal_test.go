package sqlite

import (
	"maps"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// fuseInOnePass is fuse as it was before the pass over every vector moved
// beside the lexical lookups (passOver): the z-scores and the vector
// side's proposals worked out in one loop, with the lexical candidates
// known. The split must choose the same candidates and scores.
func fuseInOnePass(lex lexicalMatch, cos []float32, v *view) (map[int64]float64, float64) {
	candidates := map[int64]float64{}
	lexical := make([]bool, len(v.c.seqs))
	for _, c := range lex.top {
		candidates[c.Seq] = 0
		if i := v.c.index(c.Seq); i >= 0 {
			lexical[i] = true
		}
	}
	mean, spread := memory.MeanDeviation(cos)
	if spread > 0 {
		proposals := memory.NewTopN(memory.CandidatePool)
		for j, i := range v.withVec {
			z := (float64(cos[j]) - mean) / spread
			if z <= 0 {
				continue
			}
			if seq := v.c.seqs[i]; lexical[i] {
				candidates[seq] = z
			} else {
				proposals.Push(seq, z)
			}
		}
		for _, c := range proposals.Best() {
			candidates[c.Seq] = c.Score
		}
	}
	out := map[int64]float64{}
	relevance := 0.0
	bestLex := 0.0
	for seq := range candidates {
		bestLex = max(bestLex, lex.exact[v.c.index(seq)])
	}
	for seq, z := range candidates {
		exact := lex.exact[v.c.index(seq)]
		relevance = max(relevance, memory.CandidateRelevance(exact, lex.whole, z, spread > 0))
		if score := memory.FusedScore(exact, bestLex, z); score > 0 {
			out[seq] = score
		}
	}
	return out, relevance * lex.known
}

func TestFuseChoosesAsInOnePass(t *testing.T) {
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
		lex := lexicalMatch{exact: make([]float64, n), whole: 3, known: 1}
		top := memory.NewTopN(memory.CandidatePool)
		for range r.IntN(2 * memory.CandidatePool) {
			i := r.IntN(n)
			lex.exact[i] = float64(1 + r.IntN(3))
			top.Push(c.seqs[i], lex.exact[i])
		}
		lex.top = top.Best()

		want, wantRelevance := fuseInOnePass(lex, cos, v)
		got, gotRelevance := fuse(lex, passOver(cos, v), v)
		if !maps.Equal(got, want) || gotRelevance != wantRelevance {
			t.Fatalf("round %d (%d memories, %d lexical): fuse chose\n%v (relevance %v), in one pass\n%v (relevance %v)",
				round, n, len(lex.top), got, gotRelevance, want, wantRelevance)
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
