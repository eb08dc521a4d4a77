package gitsync

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/memory"
)

// Reverting the commit that split a project (issue: reliability, item
// 9): the split commit added memories and moved every memory into
// shards; commits after it added memories to some shards. A revert takes
// out what the split commit added and keeps what came after, whether or
// not acolyte's merge driver is registered: git's modify/delete
// conflicts on the shards changed since are resolved by `sync`, which
// merges the project by id from the three commits git is reverting
// between, and check passes.
func TestRevertingTheSplitTakesOutWhatItAdded(t *testing.T) {
	t.Parallel() // its own repositories and indexes, seconds of git and SQLite
	for _, driver := range []bool{true, false} {
		t.Run(map[bool]string{true: "driver", false: "union"}[driver], func(t *testing.T) {
			t.Parallel()
			var root string
			if driver {
				root = newDriverRepo(t)
			} else {
				root = t.TempDir()
				runGit(t, root, "init", "-q", "-b", "main")
			}
			w, mems := belowTheSplit(t, root)
			ctx := t.Context()

			var reverted []string
			for i := range 20 {
				a, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "added by the split commit " + string(rune('a'+i))})
				if err != nil {
					t.Fatal(err)
				}
				reverted = append(reverted, a.Memory.Content)
			}
			if _, err := os.Stat(filepath.Join(root, format.Dir, format.ShardsDir)); err != nil {
				t.Fatalf("the commit did not split: %v", err)
			}
			runGit(t, root, "add", "-A")
			runGit(t, root, "commit", "-qm", "split")
			split := strings.TrimSpace(runGit(t, root, "rev-parse", "HEAD"))

			var kept []string
			for i := range 6 {
				a, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "added after the split " + string(rune('a'+i))})
				if err != nil {
					t.Fatal(err)
				}
				kept = append(kept, a.Memory.Content)
				runGit(t, root, "add", "-A")
				runGit(t, root, "commit", "-qm", "after the split")
			}

			if out, err := gittest.Try(root, nil, "revert", "--no-edit", split); err == nil {
				t.Fatalf("the revert did not conflict; the test needs it to:\n%s", out)
			}
			var warnings []string
			w.Warn = func(m string) { warnings = append(warnings, m) }
			if _, err := w.List(ctx, memory.Filter{Scope: memory.ScopeProject}); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(warnings, func(m string) bool {
				return strings.Contains(m, "revert in progress") && strings.Contains(m, "acolyte sync")
			}) {
				t.Errorf("in the middle of the revert, no warning says the memories are unmerged: %q", warnings)
			}
			during, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "remembered in the middle of the revert"})
			if err != nil {
				t.Fatalf("remember in the middle of the revert: %v", err)
			}
			kept = append(kept, during.Memory.Content)
			synced, err := w.Sync(ctx)
			if err != nil {
				t.Fatalf("sync in the middle of the revert: %v", err)
			}
			if !strings.Contains(synced.Resolved, "revert") {
				t.Errorf("sync does not say it merged the memories: %q", synced.Resolved)
			}
			if unmerged := runGit(t, root, "ls-files", "-u"); unmerged != "" {
				t.Errorf("sync left conflicts in the index:\n%s", unmerged)
			}
			got := projectContents(t, w)
			for _, c := range reverted {
				if slices.Contains(got, c) {
					t.Errorf("the reverted memory %q is still listed", c)
				}
			}
			for _, c := range kept {
				if !slices.Contains(got, c) {
					t.Errorf("the memory %q, added after the split, is gone", c)
				}
			}
			if len(got) != len(mems)+len(kept) {
				t.Errorf("%d memories after the revert, want %d", len(got), len(mems)+len(kept))
			}
			if rep, err := Check(root); err != nil || !rep.OK {
				t.Errorf("check after the revert and sync: %+v, %v", rep.Problems, err)
			}
			if out, err := gittest.Try(root, []string{"GIT_EDITOR=true"}, "revert", "--continue"); err != nil {
				t.Fatalf("git revert --continue after sync: %v\n%s", err, out)
			}
			if status := runGit(t, root, "status", "--porcelain", "--", format.Dir); status != "" {
				t.Errorf("the revert's commit left .acolyte/ changed:\n%s", status)
			}
			warnings = nil
			if got := projectContents(t, w); len(got) != len(mems)+len(kept) || len(warnings) > 0 {
				t.Errorf("after the revert: %d memories, want %d; warnings %q", len(got), len(mems)+len(kept), warnings)
			}
		})
	}
}

// BenchmarkUnmergedWarning is what every command's refresh pays to find
// out whether git is in the middle of an operation, when it is not.
func BenchmarkUnmergedWarning(b *testing.B) {
	root := b.TempDir()
	gittest.Run(b, root, "init", "-q")
	r, err := Discover(root)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if msg := project.UnmergedWarning(b.Context(), &r.Repo); msg != "" {
			b.Fatal(msg)
		}
	}
}

// Dropping the split commit by a rebase (`git rebase --onto` its parent)
// stops at every later commit, each a modify/delete conflict on the shard
// it changed; sync at each stop merges that commit's memory into the one
// file, and the rebase ends with every later memory and none the split
// commit added.
func TestRebasingAwayTheSplitKeepsWhatCameAfter(t *testing.T) {
	t.Parallel() // its own repositories and indexes, seconds of git and SQLite
	root := t.TempDir()
	runGit(t, root, "init", "-q", "-b", "main")
	w, mems := belowTheSplit(t, root)
	ctx := t.Context()
	for i := range 20 {
		if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "added by the split commit " + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	runGit(t, root, "add", "-A")
	runGit(t, root, "commit", "-qm", "split")
	split := strings.TrimSpace(runGit(t, root, "rev-parse", "HEAD"))
	var kept []string
	for i := range 3 {
		a, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "added after the split " + string(rune('a'+i))})
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, a.Memory.Content)
		runGit(t, root, "add", "-A")
		runGit(t, root, "commit", "-qm", "after the split")
	}

	out, err := gittest.Try(root, nil, "rebase", "--onto", split+"^", split)
	if err == nil {
		t.Fatalf("the rebase did not stop; the test needs it to:\n%s", out)
	}
	for stops := 0; err != nil; stops++ {
		if stops == len(kept) {
			t.Fatalf("the rebase still stops after %d syncs: %v\n%s", stops, err, out)
		}
		synced, serr := w.Sync(ctx)
		if serr != nil || !strings.Contains(synced.Resolved, "rebase") {
			t.Fatalf("sync at stop %d of the rebase: %q, %v\n%s", stops, synced.Resolved, serr, out)
		}
		out, err = gittest.Try(root, []string{"GIT_EDITOR=true"}, "rebase", "--continue")
	}
	got := projectContents(t, w)
	for _, c := range kept {
		if !slices.Contains(got, c) {
			t.Errorf("the memory %q, added after the split, is gone", c)
		}
	}
	if len(got) != len(mems)+len(kept) {
		t.Errorf("%d memories after the rebase, want %d", len(got), len(mems)+len(kept))
	}
	if rep, err := Check(root); err != nil || !rep.OK {
		t.Errorf("check after the rebase: %+v, %v", rep.Problems, err)
	}
}
