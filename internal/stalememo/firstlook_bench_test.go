package stalememo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// BenchmarkFirstLook is what the memo adds to a CLI search's first look
// at a page of 20 hits, beyond the answer itself (a StaleFunc answering
// at once): the files' stamps, the state's misses and keeping the 20
// answers in it. Every call asks about memories it has not seen. It
// reports the median call as ms-median.
//
//	go test ./internal/stalememo -run '^$' -bench BenchmarkFirstLook -count 5
func BenchmarkFirstLook(b *testing.B) {
	root := b.TempDir()
	hourAgo := time.Now().Add(-time.Hour)
	for i := range 20 {
		p := filepath.Join(root, fmt.Sprintf("f%02d.go", i))
		if err := os.WriteFile(p, []byte("package f\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, hourAgo, hourAgo); err != nil {
			b.Fatal(err)
		}
	}
	store, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "acolyte.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	none := func(context.Context, []memory.Memory) (map[string]memory.Staleness, error) {
		return map[string]memory.Staleness{}, nil
	}
	var took []time.Duration
	for n := 0; b.Loop(); n++ {
		mems := make([]memory.Memory, 20)
		for i := range mems {
			mems[i] = memory.Memory{ID: fmt.Sprintf("m%d-%d", n, i), Commit: "c", Paths: []string{fmt.Sprintf("f%02d.go", i)}}
		}
		memo := New(root, none)
		memo.State = store
		start := time.Now()
		if _, err := memo.Stale(b.Context(), mems); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
}
