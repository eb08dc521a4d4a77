package memory_test

import (
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// Within a run of equal scores the fresh results come first, each side in
// its order; no result passes one that scores otherwise, and a result
// whose score differs in the fourth decimal is not equal.
func TestFreshFirstAmongEqualsMovesOnlyWithinTies(t *testing.T) {
	type item struct {
		id    string
		score float64
		stale bool
	}
	items := []item{
		{"a", 0.9, true}, {"b", 0.8, true}, {"c", 0.8, false}, {"d", 0.8, true}, {"e", 0.8, false},
		{"f", 0.7001, true}, {"g", 0.7, false}, {"h", 0.5, false}, {"i", 0.5, true},
	}
	memory.FreshFirstAmongEquals(items, func(i item) float64 { return i.score }, func(i item) bool { return i.stale })
	var got []string
	for _, i := range items {
		got = append(got, i.id)
	}
	if want := []string{"a", "c", "e", "b", "d", "f", "g", "h", "i"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
