package bench_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/bench"
)

func TestMetrics(t *testing.T) {
	ctx := context.Background()
	s, err := memory.Open(ctx, filepath.Join(t.TempDir(), "b.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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

func BenchmarkIndex(b *testing.B) {
	ctx := context.Background()
	docs := make([]bench.Doc, 1000)
	for i := range docs {
		docs[i] = bench.Doc{ID: fmt.Sprint(i), Group: "g", Content: fmt.Sprintf("memory number %d mentions runTool and the cache layer %d", i, i%17)}
	}
	for b.Loop() {
		s, err := memory.Open(ctx, filepath.Join(b.TempDir(), "b.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bench.Index(ctx, s, docs, nil); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
