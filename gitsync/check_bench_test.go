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

// TestTooManyMemoriesToIndex: a file of more than MaxIndexedMemories lines
// is not imported, with a warning saying why and how to fix it, every
// command; writers and check refuse it the same way.
func TestTooManyMemoriesToIndex(t *testing.T) {
	w := workspaceIn(t)
	var warnings []string
	w.Warn = func(m string) { warnings = append(warnings, m) }
	path := format.MemoriesPath(w.Repo.Root)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, format.Encode(largeMemories(MaxIndexedMemories+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		warnings = nil
		imp, err := w.Refresh(t.Context())
		if err != nil || imp.Added != 0 {
			t.Fatalf("run %d: refresh %+v, %v", run, imp, err)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "at most 100000 memories") || !strings.Contains(warnings[0], "git log --stat") {
			t.Fatalf("run %d: warnings %q", run, warnings)
		}
	}
	_, err := w.Add(t.Context(), memory.Draft{Content: "one more", Scope: memory.ScopeProject, Kind: memory.KindStored})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("add: %v", err)
	}
	if _, err := Check(w.Repo.Root); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("check: %v", err)
	}
}
