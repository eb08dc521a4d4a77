package bench_test

import (
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/bench"
	"github.com/acolyte-dev/acolyte/memory"
)

// TestPathScopedSetIsWhatItsCategoriesSay holds the path-scoped dev and
// test sets to their README: in category 1 the file at hand is one the
// answer's globs match, in 2 the answer applies everywhere or has no
// globs, in 3 it is scoped to other files. Every glob compiles, and each
// query names one file of its group.
func TestPathScopedSetIsWhatItsCategoriesSay(t *testing.T) {
	docs, err := bench.ReadJSONL[bench.Doc]("testdata/path-scoped/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]bench.Doc{}
	for _, d := range docs {
		if err := memory.ValidateGlobs(d.Globs); err != nil {
			t.Errorf("%s: %v", d.ID, err)
		}
		byID[d.ID] = d
	}
	for _, split := range []string{"dev", "test"} {
		qs, err := bench.ReadJSONL[bench.Query]("testdata/path-scoped/queries-" + split + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) == 0 {
			t.Fatalf("the %s split is empty", split)
		}
		for _, q := range qs {
			if len(q.Paths) != 1 || len(q.Relevant) == 0 {
				t.Errorf("%s: paths %q, relevant %q; want one file and an answer", q.ID, q.Paths, q.Relevant)
				continue
			}
			for _, id := range q.Relevant {
				d, ok := byID[id]
				if !ok || d.Group != q.Group {
					t.Errorf("%s: relevant %s is not a memory of group %s", q.ID, id, q.Group)
					continue
				}
				matches := memory.MatchesAny(d.Globs, q.Paths)
				everywhere := len(d.Globs) == 0 || slices.Equal(d.Globs, []string{memory.AlwaysGlob})
				if ok := map[int]bool{1: matches && !everywhere, 2: everywhere, 3: !matches}[q.Category]; !ok {
					t.Errorf("%s (category %d): %s has globs %q against %q", q.ID, q.Category, id, d.Globs, q.Paths)
				}
			}
		}
	}
}
