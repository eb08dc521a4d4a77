package gitsync_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// citingRepo is a packed repository whose files changed, went, moved and
// stayed after a commit that memories cite, and those memories.
func citingRepo(t *testing.T) (*gitsync.Repo, []memory.Memory) {
	t.Helper()
	root := t.TempDir()
	git := func(args ...string) string { t.Helper(); return strings.TrimSpace(gittest.Run(t, root, args...)) }
	git("init", "-q", "-b", "main")
	gittest.WriteFiles(t, root, map[string]string{"src/changed.go": "package a\n", "src/gone.go": "package b\n",
		"src/moved.go": "package c\n", "src/same.go": "package d\n"})
	git("add", ".")
	git("commit", "-q", "-m", "start")
	cited := git("rev-parse", "HEAD")
	gittest.WriteFiles(t, root, map[string]string{"src/changed.go": "package a // changed\n", "src/new.go": "package e\n"})
	git("rm", "-q", "src/gone.go")
	git("mv", "src/moved.go", "src/renamed.go")
	git("add", ".")
	git("commit", "-q", "-m", "change, drop, move")
	git("gc", "-q")
	repo, err := gitsync.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	mem := func(id string, paths ...string) memory.Memory {
		return memory.Memory{ID: id, Content: id, Scope: memory.ScopeProject, Commit: cited, Paths: paths}
	}
	return repo, []memory.Memory{
		mem("changed", "src/changed.go", "src/same.go"), mem("gone", "src/gone.go"), mem("moved", "src/moved.go"),
		mem("same", "src/same.go"), mem("new-since", "src/new.go"), mem("escapes", "../outside.go", "src/../src/same.go"),
	}
}

func openState(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "acolyte.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// withoutObjects hides the repository's objects, so that only what was
// kept can answer; it puts them back when the test ends.
func withoutObjects(t *testing.T, repo *gitsync.Repo) {
	t.Helper()
	objects := filepath.Join(repo.CommonDir(), "objects")
	if err := os.Rename(objects, objects+".hidden"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(objects, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(objects)
		os.Rename(objects+".hidden", objects)
	})
}

// The kept answers are git's: changed, deleted and renamed-away paths are
// marked as StaleByID marks them, a path left alone is not, nor one git
// does not read from the top ("src/../x", "../x");
// and once kept (by a search or ahead of one), they answer without the
// repository's objects, even about a file changed since.
func TestStaleByIDKeepingAnswersAsGitAndKeeps(t *testing.T) {
	want := map[string]memory.Staleness{
		"changed": {Changed: []string{"src/changed.go"}},
		"gone":    {Deleted: []string{"src/gone.go"}},
		"moved":   {Deleted: []string{"src/moved.go"}},
	}
	for _, ahead := range []bool{false, true} {
		repo, mems := citingRepo(t)
		state := openState(t)
		keeping := repo.StaleByIDKeeping(state)
		if ahead {
			if err := repo.KeepCitedBlobs(t.Context(), state, mems); err != nil {
				t.Fatal(err)
			}
		} else {
			got, err := keeping(t.Context(), mems)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := repo.StaleByID(t.Context(), mems)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(plain, want) {
				t.Fatalf("kept %v, plain %v, want %v", got, plain, want)
			}
		}

		withoutObjects(t, repo)
		gittest.WriteFiles(t, repo.Root, map[string]string{"src/same.go": "package d // changed after\n"})
		got, err := keeping(t.Context(), mems)
		if err != nil {
			t.Fatalf("ahead %v: with the objects gone: %v", ahead, err)
		}
		after := maps.Clone(want)
		after["changed"] = memory.Staleness{Changed: []string{"src/changed.go", "src/same.go"}}
		after["same"] = memory.Staleness{Changed: []string{"src/same.go"}}
		if !reflect.DeepEqual(got, after) {
			t.Errorf("ahead %v: with the objects gone, after same.go changed: %v, want %v", ahead, got, after)
		}
	}
}

// A search's check reads the objects itself, without git: from a linked
// worktree, whose objects are in the main checkout's git directory, with
// no git on PATH, the answers are the ones git gave.
func TestStaleByIDReadsObjectsWithoutGit(t *testing.T) {
	main, mems := citingRepo(t)
	linked := filepath.Join(t.TempDir(), "linked")
	gittest.Run(t, main.Root, "worktree", "add", "-q", linked)
	repo, err := gitsync.Discover(linked)
	if err != nil {
		t.Fatal(err)
	}
	want, err := repo.StaleByID(t.Context(), mems)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 3 {
		t.Fatalf("git's answer in the linked worktree: %v, want changed, gone and moved", want)
	}
	t.Setenv("PATH", t.TempDir())
	got, err := repo.StaleByID(t.Context(), mems[:5]) // not the escaping paths, which go to git
	if err != nil {
		t.Fatalf("with no git on PATH: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with no git on PATH: %v, want %v", got, want)
	}
}

// A memory remembered in the checkout, and one a pull brings in its
// file, have their cited files' blob ids kept as they are written: the
// first search to show them hashes files and reads no history, so it
// answers rightly even with the repository's objects gone.
func TestWritesKeepTheirCitedBlobs(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) string { t.Helper(); return strings.TrimSpace(gittest.Run(t, root, args...)) }
	git("init", "-q", "-b", "main")
	gittest.WriteFiles(t, root, map[string]string{"src/retry.go": "package a\n", "src/pool.go": "package b\n"})
	git("add", ".")
	git("commit", "-q", "-m", "start")
	repo, err := gitsync.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	store := openState(t)
	w := gitsync.NewCheckout(repo, store, "")
	remembered, err := w.Add(t.Context(), memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "src/retry.go holds the only retry loop"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(remembered.Memory.Paths, []string{"src/retry.go"}) {
		t.Fatalf("remembered memory cites %v", remembered.Memory.Paths)
	}
	pulled := memory.Memory{ID: "from-a-teammate", Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "the pool is sized in src/pool.go",
		Commit: git("rev-parse", "HEAD"), Paths: []string{"src/pool.go"}, CreatedAt: remembered.Memory.CreatedAt, UpdatedAt: remembered.Memory.UpdatedAt}
	if err := gitsync.Update(t.Context(), root, func(mems []memory.Memory) ([]memory.Memory, error) { return append(mems, pulled), nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}

	withoutObjects(t, repo)
	gittest.WriteFiles(t, root, map[string]string{"src/retry.go": "package a // changed\n", "src/pool.go": "package b // changed\n"})
	got, err := repo.StaleByIDKeeping(store)(t.Context(), []memory.Memory{remembered.Memory, pulled})
	if err != nil {
		t.Fatalf("with the objects gone: %v", err)
	}
	want := map[string]memory.Staleness{
		remembered.Memory.ID: {Changed: []string{"src/retry.go"}},
		pulled.ID:            {Changed: []string{"src/pool.go"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with the objects gone, after both files changed: %v, want %v", got, want)
	}
}

// A command keeps the cited blobs of its first few single-memory writes
// on its own path and leaves the rest to the background fill, which it
// says to start: an import that patches the index one memory at a time
// must not pay a lookup and a transaction for each of hundreds.
func TestManyWritesLeaveTheirBlobsToTheFill(t *testing.T) {
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q", "-b", "main")
	files := map[string]string{}
	for i := range 12 {
		files[fmt.Sprintf("src/f%02d.go", i)] = "package src\n"
	}
	gittest.WriteFiles(t, root, files)
	gittest.Run(t, root, "add", ".")
	gittest.Run(t, root, "commit", "-q", "-m", "start")
	repo, err := gitsync.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	store := openState(t)
	w := gitsync.NewCheckout(repo, store, "")
	var kept []bool
	start := time.Now()
	for i := range 12 {
		added, err := w.Add(t.Context(), memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: fmt.Sprintf("src/f%02d.go holds step %d", i, i)})
		if err != nil {
			t.Fatal(err)
		}
		key := "blob:" + added.Memory.Commit + ":" + added.Memory.Paths[0]
		v, err := store.GetState(t.Context(), key)
		kept = append(kept, err == nil && v != "")
		if i == 0 && w.LeftBlobsToKeep() {
			t.Error("the first write left its blob to the fill")
		}
	}
	if time.Since(start) >= time.Second {
		t.Skip("the writes took over a second, the budget's window: TestPutBudget covers it")
	}
	// The first write creates the file, which imports it whole; each
	// later one patches a line and puts one memory.
	if n := len(slices.DeleteFunc(slices.Clone(kept), func(k bool) bool { return !k })); n != 9 || !kept[0] || kept[11] {
		t.Errorf("writes that kept their cited blob on their own path: %v; want the first 9", kept)
	}
	if !w.LeftBlobsToKeep() {
		t.Error("after 12 writes, the rest is not left to the fill")
	}
}
