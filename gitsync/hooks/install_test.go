package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/internal/gittest"
)

func TestShimRecordsTheBinaryBlocksOnlyOnRefusalAndIsFailOpen(t *testing.T) {
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q")
	repo, err := gitsync.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	// A path that needs quoting, as an install under a user's home may.
	exe := filepath.Join(t.TempDir(), "it's $HOME", "acolyte")
	gittest.WriteFiles(t, filepath.Dir(exe), map[string]string{"acolyte": fakeAcolyte})
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := Install(t.Context(), repo, exe, false)
	if err != nil || res.Managed {
		t.Fatalf("install: %+v, %v", res, err)
	}
	noPath := []string{"PATH=/usr/bin:/bin"}
	out, err := gittest.Try(root, noPath, "commit", "-q", "--allow-empty", "-m", "ok")
	if err != nil || !strings.Contains(out, "fake acolyte hook pre-commit") {
		t.Fatalf("the recorded binary did not run without PATH: %v\n%s", err, out)
	}
	out, err = gittest.Try(root, append(noPath, "FAKE_EXIT=1"), "commit", "-q", "--allow-empty", "-m", "crash")
	if err != nil || !strings.Contains(out, "the pre-commit hook failed") {
		t.Fatalf("a failing hook blocked the commit: %v\n%s", err, out)
	}
	out, err = gittest.Try(root, append(noPath, "FAKE_EXIT="+strconv.Itoa(gitsync.ExitRefuse)), "commit", "-q", "--allow-empty", "-m", "refused")
	if err == nil {
		t.Fatalf("a refusal did not block the commit:\n%s", out)
	}
	// Neither the recorded binary nor one on PATH: warn and commit.
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	out, err = gittest.Try(root, noPath, "commit", "-q", "--allow-empty", "-m", "missing")
	if err != nil || !strings.Contains(out, "not found at "+exe+" or on PATH; skipped the pre-commit hook") {
		t.Fatalf("missing binary: %v\n%s", err, out)
	}
	if n := strings.TrimSpace(gittest.Run(t, root, "rev-list", "--count", "HEAD")); n != "3" {
		t.Errorf("%s commits, want 3", n)
	}
}

func TestInstallHooksLeavesASharedHooksFolderAlone(t *testing.T) {
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q")
	repo, err := gitsync.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	install := func(hooksPath string) Installed {
		t.Helper()
		gittest.Run(t, root, "config", "core.hooksPath", hooksPath)
		res, err := Install(t.Context(), repo, "/usr/local/bin/acolyte", false)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Tracked (husky) and merely not ignored (.githooks): shared.
	gittest.WriteFiles(t, root, map[string]string{".husky/pre-commit": "#!/bin/sh\nnpm test\n", ".gitignore": "private-hooks/\n"})
	gittest.Run(t, root, "add", ".husky")
	for _, dir := range []string{".husky", ".githooks"} {
		res := install(dir)
		if !res.Managed || res.Lines["pre-commit"] != Line("pre-commit") {
			t.Errorf("%s: %+v", dir, res)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".husky", "pre-commit")); string(b) != "#!/bin/sh\nnpm test\n" {
		t.Errorf("the tracked hook changed: %q", b)
	}
	for _, p := range []string{".husky/pre-commit" + chainSuffix, ".husky/post-merge", ".githooks"} {
		if _, err := os.Stat(filepath.Join(root, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written", p)
		}
	}
	if _, routed, _ := Status(t.Context(), repo); !routed {
		t.Error("the merge driver was not registered")
	}
	// Ignored, or outside the worktree: private, shims are written.
	for _, dir := range []string{"private-hooks", filepath.Join(t.TempDir(), "hooks")} {
		if res := install(dir); res.Managed {
			t.Errorf("%s: treated as shared", dir)
		}
		if _, err := os.Stat(filepath.Join(mustHooksDir(t, repo), "pre-commit")); err != nil {
			t.Errorf("%s: no shim: %v", dir, err)
		}
	}
}

func mustHooksDir(t *testing.T, r *gitsync.Repo) string {
	t.Helper()
	dir, err := Dir(r)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// A merge driver registered by an older acolyte, without the union
// fallback, conflicts where acolyte is not on git's PATH: hooks status
// reports it missing until hooks install replaces it.
func TestHooksStatusFlagsAMergeDriverWithoutTheFallback(t *testing.T) {
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q")
	repo, err := gitsync.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Install(t.Context(), repo, "/usr/local/bin/acolyte", false); err != nil {
		t.Fatal(err)
	}
	if _, driver, err := Status(t.Context(), repo); err != nil || !driver {
		t.Fatalf("after install: driver %v, %v", driver, err)
	}
	gittest.Run(t, root, "config", "merge."+gitsync.MergeDriverName+".driver", "acolyte merge-driver %O %A %B")
	if _, driver, err := Status(t.Context(), repo); err != nil || driver {
		t.Fatalf("with the old driver command: driver %v, %v; want it reported missing", driver, err)
	}
	if _, err := Install(t.Context(), repo, "/usr/local/bin/acolyte", false); err != nil {
		t.Fatal(err)
	}
	if _, driver, err := Status(t.Context(), repo); err != nil || !driver {
		t.Fatalf("after reinstalling: driver %v, %v", driver, err)
	}
}

// A fake acolyte for the shim: it exits with $FAKE_EXIT.
const fakeAcolyte = "#!/bin/sh\necho \"fake acolyte $*\" >&2\nexit ${FAKE_EXIT:-0}\n"
