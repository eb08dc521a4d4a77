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
