package mcp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acolyte-dev/acolyte/agent/mcp"
	"github.com/acolyte-dev/acolyte/memory"
)

// soakServer is the real HTTP handler of `acolyte mcp --http` over a real
// store, with one client session of the real SDK, as a long-running agent
// would hold.
func soakServer(tb testing.TB) *sdk.ClientSession {
	tb.Helper()
	store := openStore(tb, filepath.Join(tb.TempDir(), "acolyte.db"))
	tb.Cleanup(func() { store.Close() })
	srv := httptest.NewServer(mcp.NewHost(memory.Scoped{Store: store}, mcp.Options{}).Handler(mcp.HTTPOptions{}))
	tb.Cleanup(srv.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "soak", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: srv.URL + mcp.Path}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// soak makes n adds, each followed by a search, from add number from on.
func soak(tb testing.TB, cs *sdk.ClientSession, from, n int) {
	tb.Helper()
	for i := from; i < from+n; i++ {
		callTool(tb, cs, "memory_add", map[string]any{"scope": "user",
			"content": fmt.Sprintf("fact %d: the uploader service retries uploads over %d MiB %d times with jittered backoff", i, i%97, i%13)}, nil)
		callTool(tb, cs, "memory_search", map[string]any{"query": fmt.Sprintf("how often does the uploader retry %d", i)}, nil)
	}
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// rss is the process's resident memory in bytes, 0 where /proc is not.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return 0
	}
	return resident * int64(os.Getpagesize())
}

// writeHeapProfile saves a heap profile when ACOLYTE_SOAK_PROFILE names a
// file prefix, for `go tool pprof -diff_base`.
func writeHeapProfile(tb testing.TB, name string) {
	prefix := os.Getenv("ACOLYTE_SOAK_PROFILE")
	if prefix == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(prefix + "-" + name + ".pprof")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		tb.Fatal(err)
	}
}

// A long-lived HTTP session that adds and searches in turn leaves the
// server's heap where it was (issue 37: RSS grew 21–25 KB an add, without
// levelling off, because every request's answer was kept for a
// resumption that never came). The store's own growth, a few hundred
// bytes of catalog and cache a memory, is well under the bound.
func TestHTTPSessionKeepsNothingPerAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak of 1,100 adds")
	}
	cs := soakServer(t)
	soak(t, cs, 0, 300)
	before := heapInUse()
	const n = 800
	soak(t, cs, 300, n)
	grown := int64(heapInUse()) - int64(before)
	t.Logf("heap in use grew %d bytes over %d adds (%d a add)", grown, n, grown/n)
	if grown/n > 1024 {
		t.Errorf("the server kept %d bytes of heap per add over %d adds and searches; it should keep next to nothing", grown/n, n)
	}
}

// BenchmarkHTTPAddSoak is issue 37's soak: adds and searches interleaved
// on one session of the HTTP server, reporting what the process keeps per
// 1,000 adds once warmed up: heap in use after a collection
// (heap-B/1k-adds) and resident memory (rss-B/1k-adds, Linux). With
// ACOLYTE_SOAK_PROFILE=PREFIX it writes heap profiles before and after.
func BenchmarkHTTPAddSoak(b *testing.B) {
	cs := soakServer(b)
	soak(b, cs, 0, 200)
	before, rssBefore := heapInUse(), rss()
	writeHeapProfile(b, "before")
	b.ResetTimer()
	soak(b, cs, 200, b.N)
	b.StopTimer()
	writeHeapProfile(b, "after")
	grown := float64(int64(heapInUse()) - int64(before))
	b.ReportMetric(grown/float64(b.N)*1000, "heap-B/1k-adds")
	if rssBefore > 0 {
		b.ReportMetric(float64(rss()-rssBefore)/float64(b.N)*1000, "rss-B/1k-adds")
	}
}
