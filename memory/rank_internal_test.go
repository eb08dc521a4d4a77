package memory

import "testing"

func TestBestKeepsTheTopInOrder(t *testing.T) {
	var xs []scored
	for i := range 1000 {
		xs = append(xs, scored{seq: int64(i), score: float64((i * 7919) % 1000)})
	}
	xs = append(xs, scored{seq: 5000, score: 999}) // ties with seq 71's score: the lower seq wins
	top := best(xs, 5)
	want := []float64{999, 999, 998, 997, 996}
	if len(top) != 5 {
		t.Fatalf("got %d", len(top))
	}
	for i, w := range want {
		if top[i].score != w {
			t.Fatalf("top = %+v", top)
		}
	}
	if top[0].seq > top[1].seq {
		t.Fatalf("ties must order by seq: %+v", top[:2])
	}
	if got := best([]scored{{1, 1}, {2, 3}}, 5); len(got) != 2 || got[0].seq != 2 {
		t.Fatalf("short input: %+v", got)
	}
}

// An applicable memory that meaning did not find scores pathFloor, which
// the tail of any search keeps: only the limit may cut it.
func TestPathFloorKeepsApplicableMemoriesAboveTheTail(t *testing.T) {
	if pathFloor < tailShare || pathFloor >= 1 {
		t.Fatalf("pathFloor %v must lie in [tailShare %v, 1)", pathFloor, tailShare)
	}
	scores := map[string]float64{"best": 1, "scoped": 0.3, "weak": 0.1}
	q := Query{Paths: []string{"migrations/1.sql"}}
	ApplyPaths(q, scores, map[string][]string{"scoped": {"migrations/**"}, "new": {AlwaysGlob}, "elsewhere": {"web/**"}})
	want := map[string]float64{"best": 1, "scoped": pathScore(0.3), "weak": 0.1, "new": pathFloor}
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
	ApplyPaths(q, scores, map[string][]string{"scoped": {"migrations/**"}, "new": {AlwaysGlob}})
	if len(scores) != 2 {
		t.Errorf("OnlyPath kept %v, want the two applicable memories", scores)
	}
	if _, ok := scores["best"]; ok {
		t.Errorf("OnlyPath kept the unscoped memory: %v", scores)
	}
}
