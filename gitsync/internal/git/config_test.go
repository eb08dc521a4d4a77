package git

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/gittest"
)

// TestConfigReadsWhatGitReads holds Config, which reads the file itself,
// to what `git config --local --get` prints for the same keys, among
// values written by git and by hand in the forms git accepts.
func TestConfigReadsWhatGitReads(t *testing.T) {
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q")
	set := func(args ...string) { gittest.Run(t, root, append([]string{"config"}, args...)...) }
	set("merge.acolyte.name", "acolyte project memories (merge by id)")
	set("merge.acolyte.driver", `acolyte merge-driver %O %A %B || git merge-file --union "%A" "%O" "%B"`)
	set("core.hooksPath", ".husky/_")
	set("quoted.key", `  spaces, "quotes", a \ backslash; a # hash  `)
	set("merge.Acolyte.driver", "the subsection is case-sensitive")
	set("merge.with.dots.driver", "a subsection may hold dots")
	set("--add", "multi.value", "first")
	set("--add", "multi.value", "last")
	appendFile(t, filepath.Join(root, ".git", "config"), strings.Join([]string{
		"[Hand]",
		"\tWritten = by hand ; a comment",
		"\tescapes = \"tab\\there\\\\\"",
		"\tempty =",
		"[hand]",
		"\tagain = a second section of the same name",
		"[include]",
		"\tpath = included.cfg",
		"",
	}, "\n"))
	if err := os.WriteFile(filepath.Join(root, ".git", "included.cfg"), []byte("[included]\n\tkey = not read by --local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{
		"merge.acolyte.name", "merge.acolyte.driver", "merge.ACOLYTE.driver", "MERGE.acolyte.DRIVER",
		"merge.Acolyte.driver", "merge.with.dots.driver", "core.hooksPath", "core.hookspath",
		"core.bare", "quoted.key", "multi.value", "hand.written", "hand.escapes",
		"hand.empty", "hand.again", "included.key", "merge.none.driver", "none.key",
	}
	for _, key := range keys {
		want, err := r.configByGit(key)
		if err != nil {
			t.Fatalf("git config --get %s: %v", key, err)
		}
		got, ok := r.configInProcess(key)
		if !ok {
			t.Errorf("%s: read by git, not in process", key)
			continue
		}
		if got != want {
			t.Errorf("%s = %q in process, %q by git", key, got, want)
		}
	}
}

// TestConfigLeavesAContinuedLineToGit: a value continued on the next line
// is read as git joins it.
func TestConfigLeavesAContinuedLineToGit(t *testing.T) {
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q")
	appendFile(t, filepath.Join(root, ".git", "config"), "[merge \"acolyte\"]\n\tdriver = acolyte merge-driver \\\n%O %A %B\n")
	r, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Config("merge.acolyte.driver"); err != nil || got != "acolyte merge-driver %O %A %B" {
		t.Errorf("Config = %q, %v; want the two lines joined", got, err)
	}
}

// TestConfigOfALinkedWorktree reads the repository's config from a linked
// worktree, as git does: the worktree has no config of its own.
func TestConfigOfALinkedWorktree(t *testing.T) {
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q")
	gittest.Run(t, root, "commit", "-q", "--allow-empty", "-m", "init")
	gittest.Run(t, root, "config", "merge.acolyte.driver", "acolyte merge-driver %O %A %B")
	linked := filepath.Join(t.TempDir(), "linked")
	gittest.Run(t, root, "worktree", "add", "-q", linked)
	r, err := Discover(linked)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Config("merge.acolyte.driver"); err != nil || got != "acolyte merge-driver %O %A %B" {
		t.Errorf("Config in a linked worktree = %q, %v", got, err)
	}
}

// TestConfigLeavesAFileItCannotReadToGit: a config git itself refuses is
// reported as git reports it, not read as empty.
func TestConfigLeavesAFileItCannotReadToGit(t *testing.T) {
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q")
	appendFile(t, filepath.Join(root, ".git", "config"), "[broken\n")
	r, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Config("merge.acolyte.driver"); err == nil {
		t.Fatal("Config read a broken file without error")
	}
	if out, err := exec.Command("git", "-C", root, "config", "--local", "--get", "merge.acolyte.driver").CombinedOutput(); err == nil {
		t.Fatalf("git read the broken file too: %s", out)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
