package gitsync

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// BenchmarkSyncUnchanged is the sync that the pre-commit hook runs on every
// commit when the memories file (10k memories) did not change, which reads
// no memory rows: what the pending hand edits add to it is one state read.
func BenchmarkSyncUnchanged(b *testing.B) {
	w, _ := benchWorkspace(b)
	if _, err := w.Sync(b.Context()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := w.Sync(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImportChanged is the import every command runs after the
// memories file changed (one line edited, here by a checkout flipping
// between two versions), which now also looks for hand edits.
func BenchmarkImportChanged(b *testing.B) {
	w, mems := benchWorkspace(b)
	path := format.MemoriesPath(w.Repo.Root)
	edited := slices.Clone(mems)
	edited[len(edited)/2].Content += " and the tests"
	versions := [][]byte{format.Encode(edited), format.Encode(mems)}
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		if err := os.WriteFile(path, versions[i%2], 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if imp, err := w.Refresh(b.Context()); err != nil || imp.Skipped {
			b.Fatalf("refresh: %+v, %v", imp, err)
		}
	}
}

func benchWorkspace(b *testing.B) (*Checkout, []memory.Memory) {
	dir := b.TempDir()
	if out, err := tryGit(dir, nil, "init", "-q"); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	repo, err := Discover(dir)
	if err != nil {
		b.Fatal(err)
	}
	s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "acolyte.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	w := NewCheckout(repo, s, "")
	mems := make([]memory.Memory, 10000)
	for i := range mems {
		mems[i] = stored(fmt.Sprintf("01J%023d", i), fmt.Sprintf("fact number %d about the build", i), t0)
	}
	if err := format.WriteFile(format.MemoriesPath(dir), mems); err != nil {
		b.Fatal(err)
	}
	if _, err := w.Refresh(b.Context()); err != nil {
		b.Fatal(err)
	}
	return w, mems
}
