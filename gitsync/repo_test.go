package gitsync

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Discover and Head read .git themselves; they must agree with git on
// every shape a checkout takes: a subfolder, a loose and a packed branch,
// a detached HEAD, a linked worktree, no commits yet, and no repository.
func TestRepoReadsWhatGitSays(t *testing.T) {
	main := t.TempDir()
	runGit(t, main, "init", "-q", "-b", "main")
	r, err := Discover(main)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Head(); got != "" {
		t.Fatalf("Head with no commits = %q, want empty", got)
	}
	runGit(t, main, "commit", "-q", "--allow-empty", "-m", "one")
	sub := filepath.Join(main, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	head := func(dir string) string { return strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD")) }
	check := func(name, dir, root string) {
		t.Helper()
		r, err := Discover(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wantRoot, _ := filepath.EvalSymlinks(root)
		if r.Root != wantRoot {
			t.Errorf("%s: root %s, want %s", name, r.Root, wantRoot)
		}
		if got, want := r.Head(), head(dir); got != want {
			t.Errorf("%s: Head %q, git says %q", name, got, want)
		}
	}
	check("loose branch, from a subfolder", sub, main)
	runGit(t, main, "pack-refs", "--all")
	check("packed branch", main, main)
	runGit(t, main, "commit", "-q", "--allow-empty", "-m", "two")
	check("loose over packed", main, main)
	linked := filepath.Join(t.TempDir(), "linked")
	runGit(t, main, "worktree", "add", "-q", "-b", "side", linked)
	runGit(t, linked, "commit", "-q", "--allow-empty", "-m", "three")
	check("linked worktree", linked, linked)
	runGit(t, main, "checkout", "-q", "--detach", "HEAD~1")
	check("detached HEAD", main, main)
	if _, err := Discover(t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("Discover outside a repository: %v, want ErrNotRepo", err)
	}
}
