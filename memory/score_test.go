package memory_test

import (
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// evidence is a text's evidence from plain maps: exact scores, z-scores,
// and no cosines with the words.
func evidence(words []memory.WordEvidence, exact, z map[string]float64) memory.TextEvidence[string] {
	e := memory.TextEvidence[string]{Words: words, Vectors: len(z) > 0}
	for k, score := range exact {
		e.Lexical = append(e.Lexical, memory.Hit[string]{Key: k, Score: score})
	}
	for k, score := range z {
		e.Vector = append(e.Vector, memory.Hit[string]{Key: k, Score: score})
	}
	slices.SortFunc(e.Vector, func(a, b memory.Hit[string]) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return 0
	})
	e.Exact = func(k string) float64 { return exact[k] }
	e.Z = func(k string) float64 { return z[k] }
	e.WordCosine = func(string, int) (float64, bool) { return 0, false }
	return e
}

func keys(hits []memory.Hit[string]) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Key
	}
	return out
}

// Score is the whole of a search after gathering, for every engine: each
// text is judged against the floor alone, a memory keeps the best score
// any text gives it, ties go to the lower key, and the limit, the tail and
// the method hold.
func TestScoreJoinsTextsAndOrders(t *testing.T) {
	// Text one: every word known and held; "far" barely matches, "v" only
	// by its vector (z = vectorFullZ: the vector side's whole weight).
	one := evidence([]memory.WordEvidence{{IDF: 2, Known: true}},
		map[string]float64{"m": 2, "n": 2, "b": 1, "far": 0.2}, map[string]float64{"v": 4})
	// Text two: two of its three words known to nothing here, and its
	// match covers a seventh of it: below the floor.
	two := evidence([]memory.WordEvidence{{IDF: 3}, {IDF: 3}, {IDF: 1, Known: true}},
		map[string]float64{"b": 1}, nil)
	texts := []memory.TextEvidence[string]{one, two}

	got := keys(memory.Score(memory.Query{}, texts, nil, nil))
	// m and n tie at 1-vectorWeight; v scores vectorWeight; b scores half
	// of m; far lies below the tail; text two gives b nothing.
	if want := []string{"m", "n", "v", "b"}; !slices.Equal(got, want) {
		t.Fatalf("ranked %v, want %v", got, want)
	}
	// Without the floor text two counts, and b scores there as its best
	// match, tying with m and n, ahead of both by its key; the tail stays.
	got = keys(memory.Score(memory.Query{NoFloor: true}, texts, nil, nil))
	if want := []string{"b", "m", "n", "v", "far"}; !slices.Equal(got, want) {
		t.Fatalf("without the floor ranked %v, want %v", got, want)
	}
	got = keys(memory.Score(memory.Query{NoFloor: true, Filter: memory.Filter{Limit: 2}}, texts, nil, nil))
	if want := []string{"b", "m"}; !slices.Equal(got, want) {
		t.Fatalf("limited to 2, ranked %v, want %v", got, want)
	}
	got = keys(memory.Score(memory.Query{Method: memory.MethodVector}, texts, nil, nil))
	if want := []string{"v"}; !slices.Equal(got, want) {
		t.Fatalf("by vectors alone ranked %v, want %v", got, want)
	}
	got = keys(memory.Score(memory.Query{Method: memory.MethodLexical}, texts, nil, nil))
	if want := []string{"m", "n", "b"}; !slices.Equal(got, want) {
		t.Fatalf("by words alone ranked %v, want %v", got, want)
	}
	// A memory of globs for the file at hand joins, above every match.
	globs := map[string][]string{"rule": {"migrations/**"}, "other": {"web/**"}}
	got = keys(memory.Score(memory.Query{Paths: []string{"migrations/1.sql"}}, texts, globs, nil))
	if want := []string{"rule", "m", "n", "v", "b"}; !slices.Equal(got, want) {
		t.Fatalf("with a file at hand ranked %v, want %v", got, want)
	}
}

// The vector side's say in relevance is how far a memory's cosine leads
// the crowd's, not how many deviations: in a large crowd whose cosines lie
// close together, the best of them stands several deviations out by chance
// alone. The same z-score, 4, is a lead of 0.08 in a tight crowd and of
// 0.4 in a wide one; only the second lifts a weakly worded question over
// the floor.
func TestRelevanceWeighsTheLeadNotTheDeviations(t *testing.T) {
	words := []memory.WordEvidence{{IDF: 2, Known: true}, {IDF: 3}, {IDF: 3}}
	for _, c := range []struct {
		spread float64
		found  bool
	}{{0.02, false}, {0.1, true}} {
		e := evidence(words, map[string]float64{"m": 1}, map[string]float64{"m": 4})
		e.Spread = c.spread
		got := memory.Score(memory.Query{}, []memory.TextEvidence[string]{e}, nil, nil)
		if found := len(got) > 0; found != c.found {
			t.Errorf("z 4 in a crowd of spread %g: found %v, want %v", c.spread, keys(got), c.found)
		}
	}
}
