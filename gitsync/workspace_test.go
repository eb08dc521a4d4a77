package gitsync

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

func workspaceIn(t *testing.T) *Checkout {
	t.Helper()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	return workspaceAt(t, dir)
}

// workspaceAt is a workspace over the repository at dir, with an index of
// its own.
func workspaceAt(t *testing.T, dir string) *Checkout {
	t.Helper()
	repo, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "acolyte.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return NewCheckout(repo, s, "")
}

func projectContents(t *testing.T, w *Checkout) []string {
	t.Helper()
	mems, err := w.List(t.Context(), memory.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range mems {
		out = append(out, m.Content)
	}
	return out
}

// Once an import has recorded the file's stat, a refresh that finds it
// unchanged reads nothing; a rewrite that keeps the size and puts back the
// modification time (as rsync -t or tar would) must still be imported.
func TestRefreshTrustsOnlyASettledStat(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no change time or inode on Windows: every refresh hashes")
	}
	w := workspaceIn(t)
	w.ws.Settle = 0
	path := format.MemoriesPath(w.Repo.Root)
	if err := format.WriteFile(path, []memory.Memory{stored("01A", "the parser is hand written", t0)}); err != nil {
		t.Fatal(err)
	}
	if imp, err := w.Refresh(t.Context()); err != nil || imp.Skipped {
		t.Fatalf("first refresh: %+v, %v", imp, err)
	}
	state, err := w.ws.Store.GetState(t.Context(), w.ws.StateKey())
	if err != nil || !strings.Contains(state, acolytedir.StampSep) {
		t.Fatalf("the import recorded no stat stamp: %q, %v", state, err)
	}
	if imp, err := w.Refresh(t.Context()); err != nil || !imp.Skipped {
		t.Fatalf("refresh of an unchanged file: %+v, %v", imp, err)
	}

	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "hand written", "hand-written", 1)
	if len(edited) != len(data) {
		t.Fatal("the edit must keep the size")
	}
	time.Sleep(10 * time.Millisecond) // a new change time even on coarse clocks
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if imp, err := w.Refresh(t.Context()); err != nil || imp.Skipped {
		t.Fatalf("a same-size rewrite with the old mtime was skipped: %+v, %v", imp, err)
	}
	if got := projectContents(t, w); len(got) != 1 || got[0] != "the parser is hand-written" {
		t.Fatalf("index = %q", got)
	}
}

// A file changed moments ago may change again within the same clock tick
// without its stat showing it, so its stat is not recorded yet: the next
// refresh hashes the content.
func TestRefreshDoesNotStampAFreshFile(t *testing.T) {
	w := workspaceIn(t)
	path := format.MemoriesPath(w.Repo.Root)
	if err := format.WriteFile(path, []memory.Memory{stored("01A", "a fresh fact", t0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	state, err := w.ws.Store.GetState(t.Context(), w.ws.StateKey())
	if err != nil || state == "" || strings.Contains(state, acolytedir.StampSep) {
		t.Fatalf("state after importing a file written just now: %q, %v", state, err)
	}
}
