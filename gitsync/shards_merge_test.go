package gitsync

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// A branch that split the project merged with one that did not, through
// acolyte's merge driver and the post-merge hook, leaves what check passes
// with no sync by hand (issue 37): the other side's new memory, which the
// driver leaves in the inbox, goes to its shard.
func TestAMergeAcrossTheSplitPassesCheck(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	root := newDriverRepo(t)
	w, mems := belowTheSplit(t, root)
	ctx := t.Context()

	runGit(t, root, "checkout", "-q", "-b", "grow")
	for i := range 20 {
		if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "grown fact " + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, format.Dir, format.ShardsDir)); err != nil {
		t.Fatalf("the branch did not split: %v", err)
	}
	runGit(t, root, "add", "-A")
	runGit(t, root, "commit", "-qm", "split")

	runGit(t, root, "checkout", "-q", "main")
	if _, err := w.RunHook(ctx, "post-checkout", []string{"a", "b", "1"}); err != nil {
		t.Fatal(err)
	}
	here, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "added on main before the merge"})
	if err != nil {
		t.Fatal(err)
	}
	runGit(t, root, "commit", "-qam", "main")
	runGit(t, root, "merge", "-q", "--no-edit", "grow")
	if _, err := w.RunHook(ctx, "post-merge", []string{"0"}); err != nil {
		t.Fatal(err)
	}
	if got := projectContents(t, w); !slices.Contains(got, here.Memory.Content) || len(got) != len(mems)+21 {
		t.Errorf("after the merge: %d memories, want %d with %q", len(got), len(mems)+21, here.Memory.Content)
	}
	if rep, err := Check(root); err != nil || !rep.OK {
		t.Errorf("check after a merge across the split: %+v, %v", rep.Problems, err)
	}
}

// A forget killed between its tombstone and its shard's line leaves the
// memory hidden, says so, and the next ordinary write removes the line,
// so that check passes again without a sync by hand (issue 37).
func TestTheWriteAfterAnInterruptedForgetTidiesItsLine(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	w, mems := splitWorkspace(t, format.SplitAt+50)
	w.ws.Settle = 0
	ctx := t.Context()
	gone := mems[7]
	// What the killed forget wrote: the tombstone, not the line's removal.
	if err := w.ws.AddTombstones([]memory.Memory{gone}, t0); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	w.Warn = func(m string) { warnings = append(warnings, m) }
	if got := projectContents(t, w); slices.Contains(got, gone.Content) {
		t.Fatal("the forgotten memory is still found")
	}
	if !slices.ContainsFunc(warnings, func(m string) bool { return strings.Contains(m, "1 forgotten memories still have their lines") }) {
		t.Errorf("no warning about the line left behind: %q", warnings)
	}
	if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "An ordinary write after the crash."}); err != nil {
		t.Fatal(err)
	}
	if rep, err := Check(w.Repo.Root); err != nil || !rep.OK {
		t.Errorf("check after the next write: %+v, %v", rep.Problems, err)
	}
	shard, err := os.ReadFile(filepath.Join(w.Repo.Root, format.Dir, format.ShardFile(format.ShardOf(gone.ID))))
	if err != nil || strings.Contains(string(shard), gone.ID) {
		t.Errorf("the line of %s is still in its shard (%v)", gone.ID, err)
	}
}

// belowTheSplit commits, in the repository at root, a project ten
// memories short of the split, synced, and returns its checkout and
// memories.
func belowTheSplit(t *testing.T, root string) (*Checkout, []memory.Memory) {
	t.Helper()
	mems := storedMemories(format.SplitAt - 10)
	if err := os.MkdirAll(filepath.Join(root, format.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := format.WriteFile(format.MemoriesPath(root), mems); err != nil {
		t.Fatal(err)
	}
	w := workspaceAt(t, root)
	w.ws.Settle = 0
	if _, err := w.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	runGit(t, root, "add", "-A")
	runGit(t, root, "commit", "-qm", "one file")
	return w, mems
}
