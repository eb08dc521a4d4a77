package gitsync

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/memory"
)

// TestMain lets git run this test binary as the merge driver: a real
// subprocess invoked by git with %O %A %B, running the same MergeFiles the
// acolyte binary runs.
func TestMain(m *testing.M) {
	// No background fill outliving a test's temporary home.
	os.Setenv("ACOLYTE_BACKGROUND_FILL", "0")
	if os.Getenv("ACOLYTE_TEST_PRINT_EXECUTABLE") == "1" {
		fmt.Print(InstalledExecutable())
		os.Exit(0)
	}
	if os.Getenv("ACOLYTE_TEST_MERGE_DRIVER") == "1" {
		report, err := format.MergeFiles(os.Args[1], os.Args[2], os.Args[3])
		for _, line := range report {
			fmt.Fprintln(os.Stderr, line)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func stored(id, content string, updated time.Time) memory.Memory {
	return memory.Memory{
		ID: id, Scope: memory.ScopeProject, Kind: memory.KindStored, Content: content,
		Source: "cli", CreatedAt: updated, UpdatedAt: updated,
	}
}

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)

// isCanonical reports whether data is a valid memories file exactly as
// format.Encode would write it.
func isCanonical(data []byte) bool {
	mems, err := format.Decode("", data)
	return err == nil && bytes.Equal(data, format.Encode(mems))
}

func edited(m memory.Memory, content string, at time.Time) memory.Memory {
	m.Content, m.UpdatedAt = content, at
	return m
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gittest.Run(t, dir, args...)
}

func commitMemories(t *testing.T, repo, msg string, mems []memory.Memory) {
	t.Helper()
	if err := format.WriteFile(format.MemoriesPath(repo), mems); err != nil {
		t.Fatal(err)
	}
	runGit(t, repo, "add", "-A")
	runGit(t, repo, "commit", "-q", "-m", msg)
}

// newDriverRepo creates a git repository whose memories.jsonl merges through
// this test binary acting as the acolyte merge driver.
func newDriverRepo(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	runGit(t, repo, "init", "-q", "-b", "main")
	r, err := Discover(repo)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.InstallMergeDriver(context.Background(), "ACOLYTE_TEST_MERGE_DRIVER=1 '"+self+"' %O %A %B"); err != nil {
		t.Fatal(err)
	}
	if err := EnsureAttributes(repo); err != nil {
		t.Fatal(err)
	}
	return repo
}

func TestGitMergeDriverUnionsAdditionsAndResolvesEdits(t *testing.T) {
	repo := newDriverRepo(t)
	a := stored("01A", "fact a", t0)
	b := stored("01B", "fact b", t0)
	commitMemories(t, repo, "base", []memory.Memory{a, b})

	runGit(t, repo, "checkout", "-q", "-b", "feature")
	commitMemories(t, repo, "feature", []memory.Memory{
		edited(a, "fact a, edited on feature later", t0.Add(2*time.Minute)),
		b, stored("01F", "added on feature", t0),
	})
	runGit(t, repo, "checkout", "-q", "main")
	commitMemories(t, repo, "main", []memory.Memory{
		edited(a, "fact a, edited on main", t0.Add(time.Minute)),
		edited(b, "fact b, edited on main", t0.Add(time.Minute)),
		stored("01M", "added on main", t0),
	})

	out := runGit(t, repo, "merge", "--no-edit", "feature")
	if !strings.Contains(out, "01A: edited on both sides; kept their version") {
		t.Errorf("git output does not show the driver's report:\n%s", out)
	}
	got, err := os.ReadFile(format.MemoriesPath(repo))
	if err != nil {
		t.Fatal(err)
	}
	want := format.Encode([]memory.Memory{
		edited(a, "fact a, edited on feature later", t0.Add(2*time.Minute)),
		edited(b, "fact b, edited on main", t0.Add(time.Minute)),
		stored("01F", "added on feature", t0),
		stored("01M", "added on main", t0),
	})
	if string(got) != string(want) {
		t.Fatalf("merged file:\n%s\nwant:\n%s", got, want)
	}
	if status := runGit(t, repo, "status", "--porcelain"); status != "" {
		t.Errorf("merge left changes behind:\n%s", status)
	}
}

func TestGitMergeOfTwoBranchesAddingMemoriesIsClean(t *testing.T) {
	repo := newDriverRepo(t)
	commitMemories(t, repo, "base", []memory.Memory{stored("01A", "fact a", t0)})
	runGit(t, repo, "checkout", "-q", "-b", "left")
	commitMemories(t, repo, "left", []memory.Memory{stored("01A", "fact a", t0), stored(memory.NewID(t0), "left fact", t0)})
	runGit(t, repo, "checkout", "-q", "main")
	commitMemories(t, repo, "main", []memory.Memory{stored("01A", "fact a", t0), stored(memory.NewID(t0), "main fact", t0)})
	runGit(t, repo, "merge", "-q", "--no-edit", "left")

	mems, err := format.ReadFile(format.MemoriesPath(repo))
	if err != nil {
		t.Fatal(err)
	}
	var contents []string
	for _, m := range mems {
		contents = append(contents, m.Content)
	}
	joined := strings.Join(contents, "|")
	if len(mems) != 3 || !strings.Contains(joined, "left fact") || !strings.Contains(joined, "main fact") {
		t.Fatalf("merged memories: %v", contents)
	}
	data, _ := os.ReadFile(filepath.Join(repo, format.Dir, format.MemoriesFile))
	if !isCanonical(data) {
		t.Error("merged file is not canonical")
	}
}
