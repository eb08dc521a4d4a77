package gitsync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Trusted asks git, so it sees what go-git's reading of .git/config does
// not: the global config, includes (conditional ones that do not apply now
// and ones not written yet included), husky's scripts and programs config
// runs from the working tree.
func TestTrustedAsksGitAboutEveryConfigSource(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	global := filepath.Join(home, "gitconfig")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	root := t.TempDir()
	runGit(t, root, "init", "-q")
	repo, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	root = repo.Root
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(global, "[core]\n\thooksPath = hooks-g\n[include]\n\tpath = ~/absent.config\n[alias]\n\tx = !tools/x.sh --all\n")
	runGit(t, root, "config", "include.path", "../team.gitconfig")
	runGit(t, root, "config", "includeIf.onbranch:other.path", "../other.gitconfig")
	write(filepath.Join(root, "team.gitconfig"), "[diff \"go\"]\n\ttextconv = \"./bin/conv\" --x\n")
	write(filepath.Join(root, "other.gitconfig"), "[core]\n\thooksPath = .husky/_\n\tattributesFile = attrs\n[include]\n\tpath = sub/nested.config\n")

	got, err := repo.Trusted(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Trusted{}
	for _, tr := range got {
		byPath[tr.Path] = tr
	}
	for _, want := range []struct {
		path string
		dir  bool
		why  string
	}{
		{global, false, "config"},
		{filepath.Join(home, "absent.config"), false, "includes it"},
		{filepath.Join(root, "hooks-g"), true, "core.hooksPath in " + global},
		{filepath.Join(root, "tools", "x.sh"), false, "alias.x"},
		{filepath.Join(root, ".git", "config"), false, "config"},
		{filepath.Join(root, "team.gitconfig"), false, "include.path in " + filepath.Join(root, ".git", "config")},
		{filepath.Join(root, "bin", "conv"), false, "diff.go.textconv"},
		{filepath.Join(root, "other.gitconfig"), false, "includeif.onbranch:other.path"},
		{filepath.Join(root, "sub", "nested.config"), false, "include.path in " + filepath.Join(root, "other.gitconfig")},
		{filepath.Join(root, ".husky", "_"), true, "core.hooksPath"},
		{filepath.Join(root, ".husky", "pre-commit"), false, "husky"},
		{filepath.Join(root, ".husky", "post-checkout"), false, "husky"},
		{filepath.Join(root, "attrs"), false, "core.attributesFile"},
	} {
		tr, ok := byPath[want.path]
		if !ok {
			t.Errorf("%s is not trusted", want.path)
			continue
		}
		if tr.Dir != want.dir || !strings.Contains(tr.Why, want.why) {
			t.Errorf("%s: dir %v, why %q; want dir %v and %q", want.path, tr.Dir, tr.Why, want.dir, want.why)
		}
	}
	for _, p := range []string{filepath.Join(root, ".husky"), filepath.Join(root, "README.md")} {
		if _, ok := byPath[p]; ok {
			t.Errorf("%s is trusted, but git neither runs nor reads it", p)
		}
	}
}

// A config git cannot read stops the agent's tools instead of leaving them
// unguarded: the model could otherwise write the file git fails on into
// one it obeys.
func TestTrustedFailsOnAConfigGitCannotRead(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	root := t.TempDir()
	runGit(t, root, "init", "-q")
	repo, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	runGit(t, root, "config", "include.path", "../broken.gitconfig")
	if err := os.WriteFile(filepath.Join(root, "broken.gitconfig"), []byte("[core\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Trusted(t.Context()); err == nil || !strings.Contains(err.Error(), "git config") {
		t.Fatalf("err = %v, want the failure of git config", err)
	}
}
