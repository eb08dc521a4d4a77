package gitsync

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/memory"
)

// Before the first sync there is no memories file; the rules AGENTS.md
// derives are in the index anyway, follow its edits, and give way to the
// file once sync writes it.
func TestRulesAreSearchableBeforeTheFirstSync(t *testing.T) {
	w := workspaceIn(t)
	root := w.Repo.Root
	rules := func() []string {
		t.Helper()
		if _, err := w.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
		mems, err := w.List(t.Context(), memory.Filter{Scope: memory.ScopeProject})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range mems {
			out = append(out, m.Content)
		}
		return out
	}
	gittest.WriteFiles(t, root, map[string]string{"AGENTS.md": "- Run make test before pushing.\n"})
	if got := rules(); len(got) != 1 || got[0] != "Run make test before pushing." {
		t.Fatalf("before sync: %q", got)
	}
	if imp, err := w.Refresh(t.Context()); err != nil || !imp.Skipped {
		t.Errorf("unchanged AGENTS.md derived again: %+v, %v", imp, err)
	}
	gittest.WriteFiles(t, root, map[string]string{"AGENTS.md": "- Run make test before pushing.\n- Never push on Fridays.\n"})
	if got := rules(); len(got) != 2 {
		t.Errorf("after an edit: %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, format.Dir)); !os.IsNotExist(err) {
		t.Errorf("reading wrote .acolyte/: %v", err)
	}
	if _, err := w.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	gittest.WriteFiles(t, root, map[string]string{"AGENTS.md": "- Only this.\n"})
	if got := rules(); len(got) != 2 {
		t.Errorf("with the file written, the index follows the file, not AGENTS.md: %q", got)
	}
	if err := os.Remove(filepath.Join(root, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, format.Dir)); err != nil {
		t.Fatal(err)
	}
	if got := rules(); len(got) != 0 {
		t.Errorf("no instruction file and no memories file: %q", got)
	}
}

// BenchmarkRefreshUnsynced is every command's first step in a repository
// that has AGENTS.md but has not run sync: the no-op path hashes the root's
// instruction files and walks no tree.
func BenchmarkRefreshUnsynced(b *testing.B) {
	dir := b.TempDir()
	if out, err := tryGit(dir, nil, "init", "-q"); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	w, _ := benchWorkspace(b)
	repo, err := Discover(dir)
	if err != nil {
		b.Fatal(err)
	}
	w.Repo = repo
	w.ws.Repo = &repo.Repo // the layouts' view of the checkout follows it
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("# Rules\n- Run make test before pushing.\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if _, err := w.Refresh(b.Context()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if imp, err := w.Refresh(b.Context()); err != nil || !imp.Skipped {
			b.Fatalf("%+v, %v", imp, err)
		}
	}
}
