package memory

import "testing"

func TestTopNKeepsTheBestInOrder(t *testing.T) {
	best := func(xs []Hit[int64], n int) []Hit[int64] {
		top := NewTopN[int64](n)
		for _, x := range xs {
			top.Push(x.Key, x.Score)
		}
		return top.Best()
	}
	var xs []Hit[int64]
	for i := range 1000 {
		xs = append(xs, Hit[int64]{Key: int64(i), Score: float64((i * 7919) % 1000)})
	}
	xs = append(xs, Hit[int64]{Key: 5000, Score: 999}) // ties with key 71's score: the lower key wins
	top := best(xs, 5)
	want := []float64{999, 999, 998, 997, 996}
	if len(top) != 5 {
		t.Fatalf("got %d", len(top))
	}
	for i, w := range want {
		if top[i].Score != w {
			t.Fatalf("top = %+v", top)
		}
	}
	if top[0].Key > top[1].Key {
		t.Fatalf("ties must order by key: %+v", top[:2])
	}
	if got := best([]Hit[int64]{{1, 1}, {2, 3}}, 5); len(got) != 2 || got[0].Key != 2 {
		t.Fatalf("short input: %+v", got)
	}
}

// A rule for the file at hand outranks every memory found by its words
// alone (at most 1-vectorWeight) or by its words and a fair likeness (z of
// half vectorFullZ: issue 36's "Write commit messages in the imperative
// mood" with MiniLM), even when meaning did not find the rule; only the
// best word match that meaning also finds outstanding (z of three quarters
// of vectorFullZ or more) stays above it. A rule for every file
// (AlwaysGlob) that meaning did not find stays below the words' match.
func TestRulesForTheFileOutrankWordsAlone(t *testing.T) {
	wordsAlone := fusedScore(3, 3, 0)
	fair := fusedScore(3, 3, vectorFullZ/2+0.2)
	outstanding := fusedScore(3, 3, vectorFullZ*3/4+0.1)
	scores := map[string]float64{"words": wordsAlone, "fair": fair, "outstanding": outstanding, "scoped": 0, "always": 0}
	q := Query{Paths: []string{"web/components/Button.tsx"}}
	applyPaths(q, scores, map[string][]string{"scoped": {"web/components/**"}, "always": {AlwaysGlob}, "other": {"migrations/**"}}, nil)
	if scores["scoped"] <= scores["fair"] || scores["scoped"] <= scores["words"] {
		t.Errorf("the rule for the file scores %v, below a memory that shares words (%v, %v)", scores["scoped"], scores["fair"], scores["words"])
	}
	if scores["outstanding"] <= scores["scoped"] {
		t.Errorf("the best word match with an outstanding vector scores %v, not above the rule for the file at %v", scores["outstanding"], scores["scoped"])
	}
	if scores["always"] >= scores["words"] {
		t.Errorf("a rule for every file scores %v, above the memory that shares words (%v)", scores["always"], scores["words"])
	}
	if _, ok := scores["other"]; ok {
		t.Errorf("a rule for other files was added: %v", scores)
	}
}

// An applicable memory that meaning did not find scores pathFloor, which
// the tail of any search keeps: only the limit may cut it.
func TestPathFloorKeepsApplicableMemoriesAboveTheTail(t *testing.T) {
	for _, floor := range []float64{pathFloor, alwaysFloor} {
		if floor < tailShare || floor >= 1 {
			t.Fatalf("floor %v must lie in [tailShare %v, 1)", floor, tailShare)
		}
	}
	scores := map[string]float64{"best": 1, "scoped": 0.3, "weak": 0.1}
	q := Query{Paths: []string{"migrations/1.sql"}}
	applyPaths(q, scores, map[string][]string{"scoped": {"migrations/**"}, "new": {AlwaysGlob}, "elsewhere": {"web/**"}}, nil)
	want := map[string]float64{"best": 1, "scoped": pathScore(0.3, false), "weak": 0.1, "new": alwaysFloor}
	if len(scores) != len(want) {
		t.Fatalf("scores %v, want %v", scores, want)
	}
	for k, v := range want {
		if scores[k] != v {
			t.Errorf("%s scores %v, want %v", k, scores[k], v)
		}
	}
	ranked := []string{"best", "scoped", "new", "weak"}
	if n := AboveTail(q, len(ranked), func(i int) float64 { return scores[ranked[i]] }); n != 3 {
		t.Errorf("the tail kept %d of %v, want the best and both applicable memories", n, ranked)
	}
	q.OnlyPath = true
	applyPaths(q, scores, map[string][]string{"scoped": {"migrations/**"}, "new": {AlwaysGlob}}, nil)
	if len(scores) != 2 {
		t.Errorf("OnlyPath kept %v, want the two applicable memories", scores)
	}
	if _, ok := scores["best"]; ok {
		t.Errorf("OnlyPath kept the unscoped memory: %v", scores)
	}
}
