package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

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
