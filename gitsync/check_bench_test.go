package gitsync

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// largeMemories is n stored memories as a team that remembered for years
// would hold them: distinct ids in time order, varied text mentioning
// paths, topics on some.
func largeMemories(n int) []memory.Memory {
	mems := make([]memory.Memory, n)
	for i := range mems {
		m := stored(fmt.Sprintf("01J%023d", i), fmt.Sprintf("fact %d: the handler in cmd/app.go retries %d times before the build of service-%d fails", i, i%7, i%113), t0.Add(time.Duration(i)*time.Millisecond))
		if i%3 == 0 {
			m.Topic = fmt.Sprintf("area %d", i%17)
		}
		mems[i] = m
	}
	return mems
}

// writeLargeRepo writes a repository whose memories file holds n memories
// in canonical form.
func writeLargeRepo(tb testing.TB, n int) string {
	tb.Helper()
	root := tb.TempDir()
	if err := os.MkdirAll(filepath.Join(root, format.Dir), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(format.MemoriesPath(root), format.Encode(largeMemories(n)), 0o644); err != nil {
		tb.Fatal(err)
	}
	return root
}

// BenchmarkCheckLarge is `acolyte check` (the CI check) on files of 10k
// and 100k lines; ns/op should grow tenfold between them.
func BenchmarkCheckLarge(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			root := writeLargeRepo(b, n)
			for b.Loop() {
				report, err := Check(root)
				if err != nil || !report.OK {
					b.Fatalf("check: %+v, %v", report.Problems, err)
				}
			}
		})
	}
}

// TestOversizedMemoriesFileIsRefused: a file over format.MaxFileBytes is
// refused at once, with the limit and the fix, by check and by writers,
// and an import leaves it out with a warning.
func TestOversizedMemoriesFileIsRefused(t *testing.T) {
	root := writeLargeRepo(t, 10)
	// Sparse: the test writes no 256 MiB.
	if err := os.Truncate(format.MemoriesPath(root), format.MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	_, err := Check(root)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "256 MiB") || !strings.Contains(err.Error(), "git log --stat") {
		t.Fatalf("check: %v", err)
	}
	err = Update(t.Context(), root, func(m []memory.Memory) ([]memory.Memory, error) { return m, nil })
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("update: %v", err)
	}
}
