package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/internal/benchdata"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// BenchmarkSearch measures Store.Search in process over n user memories,
// the part of an `acolyte search` process that grows with the store.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "acolyte.db"), static.New())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ms := make([]memory.Memory, n)
			for i := range ms {
				ms[i] = memory.Memory{ID: fmt.Sprintf("m%06d", i), Kind: memory.KindStored,
					Content:   fmt.Sprintf("fact %d: the %s layer %s %s for service %d", i, benchWords[i%37], benchWords[(i/37)%37], benchWords[(i/1369)%37], i%13),
					CreatedAt: time.Unix(0, 0)}
			}
			if _, err := s.ReplaceScope(ctx, memory.ScopeUser, "", ms); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Search(ctx, nowhere, memory.Query{Text: "how does the cache handle large uploads", Filter: memory.Filter{Limit: 5}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchWords gives each query word a document frequency of a few percent.
var benchWords = []string{"cache", "parser", "router", "queue", "upload", "mailer", "billing", "auth", "search",
	"index", "backup", "metrics", "tracing", "webhook", "session", "config", "deploy", "release", "schema",
	"migration", "worker", "scheduler", "thumbnail", "payment", "invoice", "audit", "export", "import",
	"retry", "timeout", "lock", "shard", "replica", "token", "certificate", "header", "cookie"}

// BenchmarkSearchPaths measures what the path stage adds to a search of
// 10k memories, 200 of them scoped (a large repository's rule files):
// paths=0 and paths=2 run in the same process, for a paired ratio.
func BenchmarkSearchPaths(b *testing.B) {
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "acolyte.db"), static.New())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ms := make([]memory.Memory, 10_000)
	for i := range ms {
		ms[i] = memory.Memory{ID: fmt.Sprintf("m%06d", i), Kind: memory.KindStored,
			Content:   fmt.Sprintf("fact %d: the %s layer %s %s for service %d", i, benchWords[i%37], benchWords[(i/37)%37], benchWords[(i/1369)%37], i%13),
			CreatedAt: time.Unix(0, 0)}
		if i%50 == 0 {
			ms[i].Globs = []string{fmt.Sprintf("services/%s/**", benchWords[i%37]), "**/*.{ts,tsx}"}
		}
	}
	if _, err := s.ReplaceScope(ctx, memory.ScopeUser, "", ms); err != nil {
		b.Fatal(err)
	}
	for _, paths := range [][]string{nil, {"services/cache/upload.go", "web/app/page.tsx"}} {
		b.Run(fmt.Sprintf("paths=%d", len(paths)), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Search(ctx, nowhere, memory.Query{Text: "how does the cache handle large uploads", Paths: paths, Filter: memory.Filter{Limit: 5}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNearNewFact100k measures what memory_add pays in the store
// after it stores a fact at 100k memories: the fact is added, then the
// store is searched with its content for the nearest memories (agent/
// toolbox's similar), as a ranked search (near=false) and as a Near one,
// both on one store, so the two compare in one process. The memories are
// those of agent/mcp's BenchmarkAdd100k.
func BenchmarkNearNewFact100k(b *testing.B) {
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "acolyte.db"), static.New())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ReplaceScope(ctx, memory.ScopeUser, "", runbookMemories(100_000)); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Search(ctx, nowhere, memory.Query{Text: "warm up", Filter: memory.Filter{Limit: 4}}); err != nil {
		b.Fatal(err)
	}
	added := 0
	for _, near := range []bool{false, true} {
		b.Run(fmt.Sprintf("near=%t", near), func(b *testing.B) {
			for b.Loop() {
				content := fmt.Sprintf("Benchmark fact %d: the nightly job %d writes its report to reports/%d.csv", added, added, added)
				added++
				if _, err := s.Add(ctx, nowhere, memory.Draft{Content: content, Scope: memory.ScopeUser, Kind: memory.KindStored}); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Search(ctx, nowhere, memory.Query{Text: content, Near: near, Filter: memory.Filter{Limit: 4}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// runbookMemories are n memories of the shape agent/mcp's benchmarks
// store: a service, an action and a moment, each shared by many.
func runbookMemories(n int) []memory.Memory {
	ms := make([]memory.Memory, n)
	for i := range ms {
		ms[i] = memory.Memory{ID: fmt.Sprintf("r%07d", i), Kind: memory.KindStored,
			Content:   benchdata.Runbook(i),
			CreatedAt: time.Unix(0, 0)}
	}
	return ms
}
