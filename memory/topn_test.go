package memory_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// Admits answers exactly as Push decides, ties to the lower seq included:
// the vector side of a search pushes only what Admits lets through, and a
// candidate Push would have kept and Admits turned away would drop a
// memory from the results.
func TestAdmitsSaysWhatPushKeeps(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 3, 50} {
		top := memory.NewTopN[int64](n)
		// Each seq once, in any order, and few distinct scores, so that
		// ties are common.
		for i, s := range r.Perm(5000) {
			seq, score := int64(s), float64(r.IntN(20))/4
			admitted := top.Admits(seq, score)
			top.Push(seq, score)
			kept := slices.Contains(top.Best(), memory.Hit[int64]{Key: seq, Score: score})
			if admitted != kept {
				t.Fatalf("n=%d, push %d: Admits(%d, %v) = %v, but Push kept it: %v", n, i, seq, score, admitted, kept)
			}
		}
	}
}
