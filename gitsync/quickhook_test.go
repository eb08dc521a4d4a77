package gitsync

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// quickWorkspace is a workspace whose index keeps the copy of its import
// state, as the CLI's does.
func quickWorkspace(t *testing.T) *Checkout {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("no inode on Windows: no copy is kept, and every hook opens the index")
	}
	w := workspaceIn(t)
	// An import records the file's stamp once it has settled; here at once.
	w.ws.Settle = 0
	w.IndexID = IndexIdentity(indexOf(w).Path())
	if w.IndexID == "" {
		t.Fatal("IndexIdentity of an existing database is empty")
	}
	return w
}

func quick(w *Checkout, name string, args ...string) bool {
	_, ok := QuickHook(w.Repo, w.IndexID, name, args)
	return ok
}

// runHook runs a hook the long way, as the CLI does when QuickHook
// declines.
func runHook(t *testing.T, w *Checkout, name string, args ...string) Imported {
	t.Helper()
	res, err := w.RunHook(t.Context(), name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Import
}

// A hook after a hook, with nothing changed between, is answered without
// the index; one after any change to the memories file is not, nor one for
// another index, nor one the copy is torn for.
func TestQuickHookAnswersOnlyWhatNothingChanged(t *testing.T) {
	w := quickWorkspace(t)
	addAll(t, w, "the parser is hand written", "the cache is per request")
	if quick(w, "post-merge") {
		t.Fatal("answered quickly before any hook left a copy")
	}
	if imp := runHook(t, w, "post-merge"); !imp.Skipped {
		t.Fatalf("post-merge after acolyte's own writes imported: %+v", imp)
	}
	for _, h := range [][]string{{"post-checkout", "a", "b", "1"}, {"post-merge", "0"}, {"post-rewrite", "rebase"}} {
		if !quick(w, h[0], h[1:]...) {
			t.Errorf("%v after a hook, nothing changed: not answered quickly", h)
		}
	}
	for _, h := range [][]string{{"post-checkout", "a", "b", "0"}, {"pre-commit"}, {"post-checkout"}} {
		if quick(w, h[0], h[1:]...) {
			t.Errorf("%v: answered quickly, but it is RunHook's to answer", h)
		}
	}
	if _, ok := QuickHook(w.Repo, w.IndexID+"0", "post-merge", nil); ok {
		t.Error("answered for another index")
	}

	// acolyte's own write does not touch the copy, which then names the
	// file as it was.
	addAll(t, w, "logs go to stderr")
	if quick(w, "post-merge") {
		t.Fatal("answered quickly after a remember")
	}
	runHook(t, w, "post-merge")

	outsideChange(t, w)
	if quick(w, "post-merge") {
		t.Fatal("answered quickly after the memories file changed behind acolyte's back")
	}
	// The hook that runs imports the change, and the next one is quick.
	if imp := runHook(t, w, "post-merge"); imp.Skipped {
		t.Fatalf("post-merge after the change skipped: %+v", imp)
	}
	if !quick(w, "post-merge") {
		t.Fatal("not answered quickly after the hook imported the change")
	}

	// A tombstone written by hand is a change too.
	if err := os.WriteFile(format.ForgottenPath(w.Repo.Root), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if quick(w, "post-merge") {
		t.Fatal("answered quickly after forgotten.jsonl appeared")
	}
	os.Remove(format.ForgottenPath(w.Repo.Root))

	// During a rebase RunHook skips post-checkout and post-merge and says so.
	rebase := filepath.Join(w.Repo.GitDir(), "rebase-merge")
	if err := os.Mkdir(rebase, 0o755); err != nil {
		t.Fatal(err)
	}
	if quick(w, "post-merge") {
		t.Error("answered quickly during a rebase")
	}
	os.Remove(rebase)

	path := importStateCopyPath(w.Repo)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if quick(w, "post-merge") {
		t.Error("answered quickly from a torn copy")
	}
}

// A hook with nothing to import writes the copy when there is none (an
// import state recorded before copies were kept), so the next is quick;
// and what the last import warned of is repeated, as RunHook repeats it.
func TestQuickHookRepeatsWarningsAndCopiesAnOldState(t *testing.T) {
	w := quickWorkspace(t)
	addAll(t, w, "the parser is hand written")
	path := format.MemoriesPath(w.Repo.Root)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, "not a memory\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := w.RunHook(t.Context(), "post-merge", nil)
	if err != nil || len(res.Import.Warnings) == 0 {
		t.Fatalf("post-merge over a bad line: %+v, %v", res.Import, err)
	}
	os.Remove(importStateCopyPath(w.Repo))
	if quick(w, "post-merge") {
		t.Fatal("answered quickly without a copy")
	}
	if res, err := w.RunHook(t.Context(), "post-merge", nil); err != nil || !res.Import.Skipped {
		t.Fatalf("post-merge with nothing changed: %+v, %v", res.Import, err)
	}
	imp, ok := QuickHook(w.Repo, w.IndexID, "post-merge", nil)
	if !ok || !imp.Skipped || len(imp.Warnings) != len(res.Import.Warnings) || imp.Warnings[0] != res.Import.Warnings[0] {
		t.Fatalf("quick answer %+v (%v), want the skipped import's warnings %q", imp, ok, res.Import.Warnings)
	}
}

// indexOf is the SQLite index under w's writes.
func indexOf(w *Checkout) *sqlite.Store {
	return w.ws.Store.(keepingStore).Store.(*sqlite.Store)
}
