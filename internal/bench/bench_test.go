package bench_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/bench"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// lexicalStore opens an empty store without an embedder in a temporary
// directory.
func lexicalStore(t *testing.T) *sqlite.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "b.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMetrics(t *testing.T) {
	ctx := context.Background()
	s := lexicalStore(t)
	docs := []bench.Doc{
		{ID: "a1", Group: "a", Content: "[Ann] I adopted a puppy named Biscuit"},
		{ID: "a2", Group: "a", Content: "[Bob] My car broke down again"},
		{ID: "b1", Group: "b", Content: "[Cat] I adopted a kitten named Biscuit"},
	}
	if _, err := bench.Index(ctx, s, docs, nil); err != nil {
		t.Fatal(err)
	}
	qs := []bench.Query{
		{ID: "q1", Group: "a", Query: "What is the name of Ann's puppy?", Relevant: []string{"a1"}},
		{ID: "q2", Group: "a", Query: "What happened to Bob's car?", Relevant: []string{"a2", "missing"}},
	}
	r, err := bench.Run(ctx, s, qs, []int{1, 5}, bench.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// q1 finds a1 first (and never b1, which is in another group); q2 finds
	// one of its two relevant ids first.
	if r.Recall[1] != 0.75 || r.MRR != 1 {
		t.Fatalf("recall@1 = %v, MRR = %v; want 0.75 and 1", r.Recall[1], r.MRR)
	}
	if r.NDCG[5] >= 1 || r.NDCG[5] <= 0.5 {
		t.Fatalf("nDCG@5 = %v", r.NDCG[5])
	}
}

// A corpus line's topic is stored as the memory's topic, so a question
// that names only the section a rule sits in finds it, as it does for an
// imported AGENTS.md rule.
func TestTopicIsSearched(t *testing.T) {
	ctx := context.Background()
	s := lexicalStore(t)
	docs := []bench.Doc{
		{ID: "r1", Group: "g", Content: "Prefer a small number of high-confidence findings", Topic: "code review"},
		{ID: "r2", Group: "g", Content: "Run the linter before pushing"},
	}
	if _, err := bench.Index(ctx, s, docs, nil); err != nil {
		t.Fatal(err)
	}
	qs := []bench.Query{{ID: "q", Group: "g", Query: "how long should a review be?", Relevant: []string{"r1"}}}
	r, err := bench.Run(ctx, s, qs, []int{1}, bench.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Recall[1] != 1 {
		t.Fatalf("recall@1 = %v; want the rule under the code review heading first", r.Recall[1])
	}
}

func BenchmarkIndex(b *testing.B) {
	ctx := context.Background()
	docs := make([]bench.Doc, 1000)
	for i := range docs {
		docs[i] = bench.Doc{ID: fmt.Sprint(i), Group: "g", Content: fmt.Sprintf("memory number %d mentions runTool and the cache layer %d", i, i%17)}
	}
	for b.Loop() {
		s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "b.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bench.Index(ctx, s, docs, nil); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// The cross-group run asks each query of the next group's memories, where
// nothing is relevant, and counts the queries that found nothing; each
// method searches with its own evidence.
func TestCrossGroupAndMethods(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "b.db"), static.New())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	docs := []bench.Doc{
		{ID: "a1", Group: "a", Content: "Run the unit tests with make test before pushing"},
		{ID: "a2", Group: "a", Content: "Releases are cut from the main branch every Tuesday"},
		{ID: "b1", Group: "b", Content: "Caroline adopted a puppy named Biscuit last spring"},
		{ID: "b2", Group: "b", Content: "Melanie paints landscapes of the lake near her home"},
	}
	if _, err := bench.Index(ctx, s, docs, nil); err != nil {
		t.Fatal(err)
	}
	qs := []bench.Query{
		{ID: "qa", Group: "a", Query: "when are releases cut?", Relevant: []string{"a2"}},
		{ID: "qb", Group: "b", Query: "what is the name of Caroline's puppy?", Relevant: []string{"b1"}},
	}
	r, err := bench.Run(ctx, s, qs, []int{1}, bench.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Recall[1] != 1 || r.Empty != 0 {
		t.Fatalf("own groups: recall@1 %v, empty %v; want 1 and 0", r.Recall[1], r.Empty)
	}
	cross, err := bench.Run(ctx, s, qs, []int{1}, bench.Options{Cross: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cross.Empty != 1 {
		t.Fatalf("asked of the other group, %v of the queries found nothing; want all", cross.Empty)
	}
	unfloored, err := bench.Run(ctx, s, qs, []int{1}, bench.Options{Cross: true, NoFloor: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if unfloored.Empty == 1 {
		t.Fatal("without the floor every cross-group query still found nothing; the floor test proves nothing")
	}
	for _, m := range []memory.Method{memory.MethodLexical, memory.MethodVector} {
		r, err := bench.Run(ctx, s, qs, []int{1}, bench.Options{Method: m}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Recall[1] == 0 {
			t.Errorf("method %q found nothing relevant", m)
		}
	}
}
