package memory

import (
	"cmp"
	"sort"
)

// Hit is one memory's score, under the key its engine ranks by: a seq in
// memory/sqlite, an id in memory/postgres, a position in tests.
type Hit[K cmp.Ordered] struct {
	Key   K
	Score float64
}

// TopN keeps the n highest scores pushed to it, best first, ties to the
// lower key, in a window of n: a common word can match thousands of
// memories, and half of all memories lie above the mean cosine, so the
// losers are never stored or sorted. Score picks its candidates with one,
// and an engine gathering them keeps them as Score would.
type TopN[K cmp.Ordered] struct {
	n  int
	xs []Hit[K]
}

// NewTopN returns an empty TopN of n.
func NewTopN[K cmp.Ordered](n int) *TopN[K] { return &TopN[K]{n: n, xs: make([]Hit[K], 0, n+1)} }

// Push offers a candidate.
func (t *TopN[K]) Push(key K, score float64) {
	x := Hit[K]{key, score}
	better := func(a, b Hit[K]) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Key < b.Key
	}
	if len(t.xs) == t.n && !better(x, t.xs[t.n-1]) {
		return
	}
	i := sort.Search(len(t.xs), func(i int) bool { return better(x, t.xs[i]) })
	t.xs = append(t.xs, Hit[K]{})
	copy(t.xs[i+1:], t.xs[i:])
	t.xs[i] = x
	if len(t.xs) > t.n {
		t.xs = t.xs[:t.n]
	}
}

// Admits reports whether Push would keep a candidate now. It is cheap and
// inlined, so a caller that offers many candidates, most of them turned
// away (the vector side of a search at 100k memories offers about half of
// them), tests first and calls Push only for the rest.
func (t *TopN[K]) Admits(key K, score float64) bool {
	if len(t.xs) < t.n {
		return true
	}
	last := t.xs[t.n-1]
	return score > last.Score || score == last.Score && key < last.Key
}

// Last returns the worst candidate kept, once n are kept: a candidate
// scoring below it is turned away. ok is false while there is room.
func (t *TopN[K]) Last() (last Hit[K], ok bool) {
	if len(t.xs) < t.n {
		return Hit[K]{}, false
	}
	return t.xs[t.n-1], true
}

// Best returns a copy of the candidates kept, best first.
func (t *TopN[K]) Best() []Hit[K] {
	out := make([]Hit[K], len(t.xs))
	copy(out, t.xs)
	return out
}
