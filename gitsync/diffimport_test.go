package gitsync

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/memory"
)

// outsideChange rewrites the memories file as a checkout would: one memory
// edited, one removed, one added, the rest as they were.
func outsideChange(t *testing.T, w *Checkout) {
	t.Helper()
	path := format.MemoriesPath(w.Repo.Root)
	mems, err := format.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mems[0].Content = "the parser is generated now"
	mems[0].UpdatedAt = mems[0].UpdatedAt.Add(time.Minute)
	mems = append(mems[:1], mems[2:]...)
	mems = append(mems, stored(memory.NewID(time.Now().Add(time.Hour)), "the scheduler runs at midnight UTC", t0))
	if err := format.WriteFile(path, mems); err != nil {
		t.Fatal(err)
	}
}

func addAll(t *testing.T, w *Checkout, contents ...string) {
	t.Helper()
	for _, c := range contents {
		if _, err := w.Add(t.Context(), memory.Draft{Scope: memory.ScopeProject, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
}

// importByDiff imports the memories file as it is now by its line diff
// from the shadow, failing the test if the diff cannot import it, and
// returns what it did and the file.
func importByDiff(t *testing.T, w *Checkout) (Imported, []byte) {
	t.Helper()
	data, err := acolytedir.ReadMemories(w.Repo.Root)
	if err != nil {
		t.Fatal(err)
	}
	last, err := w.ws.Store.GetState(t.Context(), w.ws.StateKey())
	if err != nil {
		t.Fatal(err)
	}
	ts, err := acolytedir.ReadTombstones(w.Repo.Root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := (project.OneFile{Root: w.Repo.Root}).PlanDiff(t.Context(), w.ws, data, last, ts)
	if err != nil || p == nil {
		t.Fatalf("planDiff = %v, %v; want a plan to import the change by its line diff", p, err)
	}
	out, diffed, err := (project.OneFile{Root: w.Repo.Root}).ApplyDiff(t.Context(), w.ws, p, acolytedir.Sha256Hex(data), data)
	if err != nil || !diffed {
		t.Fatalf("applyDiff = %+v, %v, %v; want the line diff to import the change", out, diffed, err)
	}
	return out, data
}

// An import after a checkout that changed a few lines reads only those:
// the line diff against the shadow finds the edit, the removal and the
// addition, and the index ends up holding exactly the file.
func TestImportReadsOnlyChangedLines(t *testing.T) {
	w := workspaceIn(t)
	ctx := t.Context()
	addAll(t, w, "the parser is hand written", "the cache is per request", "logs go to stderr", "billing retries three times")
	outsideChange(t, w)
	out, _ := importByDiff(t, w)
	if out.Added != 1 || out.Updated != 1 || out.Removed != 1 || out.Unchanged != 2 {
		t.Fatalf("stats %+v, want 1 added, 1 updated, 1 removed, 2 unchanged", out.ReplaceStats)
	}
	if imp, err := w.Refresh(ctx); err != nil || imp.Skipped {
		t.Fatalf("refresh: %+v, %v", imp, err)
	}
	assertFileMatchesIndex(t, w, "the parser is generated now", "logs go to stderr", "billing retries three times", "the scheduler runs at midnight UTC")
}

// Refresh works out the line diff while it hashes the file, before it
// knows whether the content changed. A checkout's change is imported by
// that diff, the counts those of the file; a file rewritten with the same
// bytes is found unchanged by its hash, and the diff worked out for it is
// dropped: nothing is written to the index or to the shadow's journal.
func TestRefreshDiffsBesideTheHash(t *testing.T) {
	w := workspaceIn(t)
	ctx := t.Context()
	addAll(t, w, "the parser is hand written", "the cache is per request", "logs go to stderr", "billing retries three times")
	outsideChange(t, w)
	imp, err := w.Refresh(ctx)
	if err != nil || imp.Skipped || imp.Added != 1 || imp.Updated != 1 || imp.Removed != 1 || imp.Unchanged != 2 {
		t.Fatalf("refresh after a checkout = %+v, %v; want 1 added, 1 updated, 1 removed, 2 unchanged", imp, err)
	}
	if _, err := os.Stat(w.ws.Shadows().ShadowJournalPath()); err != nil {
		t.Fatalf("the diff import kept no journal: %v", err)
	}
	assertFileMatchesIndex(t, w, "the parser is generated now", "logs go to stderr", "billing retries three times", "the scheduler runs at midnight UTC")

	path := format.MemoriesPath(w.Repo.Root)
	data, journal, note := readOrFail(t, path), readOrFail(t, w.ws.Shadows().ShadowJournalPath()), readOrFail(t, w.ws.Shadows().ShadowNotePath())
	os.Remove(path)
	if err := os.WriteFile(path, data, 0o644); err != nil { // a new inode, the same bytes
		t.Fatal(err)
	}
	if imp, err := w.Refresh(ctx); err != nil || !imp.Skipped || imp.Added+imp.Updated+imp.Removed != 0 {
		t.Fatalf("refresh of the same bytes = %+v, %v; want it skipped", imp, err)
	}
	if got, _ := os.ReadFile(w.ws.Shadows().ShadowJournalPath()); !bytes.Equal(got, journal) {
		t.Fatalf("the shadow's journal changed for a file that did not:\n%s\nwant\n%s", got, journal)
	}
	if got, _ := os.ReadFile(w.ws.Shadows().ShadowNotePath()); !bytes.Equal(got, note) {
		t.Fatalf("the shadow's note changed for a file that did not: %q, want %q", got, note)
	}
	assertFileMatchesIndex(t, w, "the parser is generated now", "logs go to stderr", "billing retries three times", "the scheduler runs at midnight UTC")
}

func readOrFail(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A shadow that is not what the index holds (written by another acolyte
// home, torn by a crash, edited) is never diffed against: the whole file is
// imported and the index still ends up holding exactly the file.
func TestImportIgnoresAStaleShadow(t *testing.T) {
	for name, spoil := range map[string]func(t *testing.T, path string){
		"missing": func(t *testing.T, path string) { os.Remove(path) },
		"edited": func(t *testing.T, path string) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data[:len(data)-10], 0o644); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := workspaceIn(t)
			addAll(t, w, "the parser is hand written", "the cache is per request", "logs go to stderr")
			spoil(t, w.ws.Shadows().ShadowPath())
			outsideChange(t, w)
			if _, err := w.Refresh(t.Context()); err != nil {
				t.Fatal(err)
			}
			assertFileMatchesIndex(t, w, "the parser is generated now", "logs go to stderr", "the scheduler runs at midnight UTC")
		})
	}
}

// A sync that changes one rule of a file whose index is exact updates
// those rows alone, and the index still holds exactly the file: the rule's
// new text in, the old one out, the stored memories untouched.
func TestSyncIndexesOnlyTheChangedRule(t *testing.T) {
	w := workspaceIn(t)
	ctx := t.Context()
	addAll(t, w, "the parser is hand written", "the cache is per request")
	agents := w.Repo.Root + "/AGENTS.md"
	for _, rule := range []string{"Run the tests with go test.", "Run the tests with make test."} {
		if err := os.WriteFile(agents, []byte("# Rules\n\n- "+rule+"\n- Wrap errors with %w.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	assertFileMatchesIndex(t, w, "the parser is hand written", "the cache is per request", "Run the tests with make test.", "Wrap errors with %w.")
}

// The shadow's note (shadow.go) lets an import trust it without hashing
// it, but never past a write in place: here the shadow is rewritten to
// what the memories file now holds, keeping its size, last bytes and
// modification time, so that only its change time shows. Trusted, it
// would make the edit invisible to the line diff.
func TestShadowNoteDoesNotHideAnInPlaceRewrite(t *testing.T) {
	w := workspaceIn(t)
	contents := []string{"alpha is one"}
	for i := range 60 { // past the 4 KiB of tail the note hashes
		contents = append(contents, fmt.Sprintf("fact number %d is about the build", i))
	}
	addAll(t, w, contents...)
	last, err := w.ws.Store.GetState(t.Context(), w.ws.StateKey())
	if err != nil {
		t.Fatal(err)
	}
	lastHash, _, _ := acolytedir.ParseImportState(last)
	if n, ok := w.ws.Shadows().Noted(); !ok || n.Hash != lastHash {
		t.Fatalf("a write left no note for its shadow: %+v, %v", n, ok)
	}
	shadow := w.ws.Shadows().ShadowPath()
	fi, err := os.Stat(shadow)
	if err != nil {
		t.Fatal(err)
	}
	// What the memories file holds, which the shadow holds too unless a
	// write left it a journal (then its size alone gives it away).
	data, err := os.ReadFile(format.MemoriesPath(w.Repo.Root))
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(data, []byte("alpha is one"), []byte("ALPHA IS ONE"), 1)
	time.Sleep(10 * time.Millisecond) // a new change time even on coarse clocks
	for _, path := range []string{shadow, format.MemoriesPath(w.Repo.Root)} {
		if err := os.WriteFile(path, edited, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(shadow, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.ws.Shadows().Noted(); ok {
		t.Error("the note still vouches for a shadow rewritten in place")
	}
	if _, err := w.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	assertFileMatchesIndex(t, w, append([]string{"ALPHA IS ONE"}, contents[1:]...)...)
}

// Checkouts back and forth between branches that edit, remove and add
// lines import by the line diff against a shadow that is not rewritten:
// the journal beside it carries what changed since its base, including a
// line a later checkout puts back as the base had it. The index must hold
// exactly the file after each one.
func TestJournalFollowsCheckoutsBackAndForth(t *testing.T) {
	w := workspaceIn(t)
	root := w.Repo.Root
	var base []memory.Memory
	for i := range 30 {
		base = append(base, stored(fmt.Sprintf("01J%023d", i), fmt.Sprintf("fact number %d is about the build", i), t0))
	}
	commitMemories(t, root, "base", base)
	branch := func(name string, change func(mems []memory.Memory) []memory.Memory) {
		runGit(t, root, "checkout", "-q", "-b", name, "master")
		commitMemories(t, root, name, change(slices.Clone(base)))
	}
	branch("one", func(mems []memory.Memory) []memory.Memory {
		mems[3] = edited(mems[3], "fact three, as branch one has it", t0.Add(time.Minute))
		mems = slices.Delete(mems, 5, 6)
		return append(mems, stored("01K00000000000000000000001", "a fact only branch one has", t0))
	})
	branch("two", func(mems []memory.Memory) []memory.Memory {
		mems[3] = edited(mems[3], "fact three, as branch two has it", t0.Add(2*time.Minute))
		mems[7] = edited(mems[7], "fact seven, as branch two has it", t0.Add(2*time.Minute))
		return mems
	})
	runGit(t, root, "checkout", "-q", "master")
	if _, err := w.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	journaled := false
	for _, name := range []string{"one", "master", "two", "one", "two", "master", "one"} {
		runGit(t, root, "checkout", "-q", name)
		imp, err := w.Refresh(t.Context())
		if err != nil || imp.Skipped {
			t.Fatalf("checkout %s: %+v, %v", name, imp, err)
		}
		if _, err := os.Stat(w.ws.Shadows().ShadowJournalPath()); err == nil {
			journaled = true
		}
		data, err := os.ReadFile(format.MemoriesPath(root))
		if err != nil {
			t.Fatal(err)
		}
		mems, err := format.Decode("", data)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, m := range mems {
			want = append(want, m.Content)
		}
		assertFileMatchesIndex(t, w, want...)
	}
	if !journaled {
		t.Error("no checkout left a journal: every import rewrote the shadow")
	}
}

// A forget and an edit through the fast path put their lines in the
// shadow's journal instead of rewriting its base, and base and journal
// still make exactly the file: after every write, and after the checkout
// whose import then diffs against them. A memory added and forgotten again
// leaves no entry behind: the base never had it.
func TestFastPathWritesGoToTheShadowsJournal(t *testing.T) {
	w := workspaceIn(t)
	ctx := t.Context()
	addAll(t, w, "the parser is hand written", "the cache is per request", "logs go to stderr", "billing retries three times")
	mems, err := format.ReadFile(format.MemoriesPath(w.Repo.Root))
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile(w.ws.Shadows().ShadowPath())
	if err != nil {
		t.Fatal(err)
	}
	baseInfo, err := os.Stat(w.ws.Shadows().ShadowPath())
	if err != nil {
		t.Fatal(err)
	}
	var added memory.Added
	steps := []struct {
		name  string
		write func() error
	}{
		{"forget a line the base has", func() error { _, err := w.Remove(ctx, mems[1].ID); return err }},
		{"edit a line the base has", func() error {
			_, err := w.Edit(ctx, mems[2].ID, memory.Revision{Content: "logs go to stdout"})
			return err
		}},
		{"add a line", func() (err error) {
			added, err = w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: "the queue drains on shutdown"})
			return err
		}},
		{"edit a line only the journal has", func() error {
			_, err := w.Edit(ctx, added.Memory.ID, memory.Revision{Content: "the queue drains on SIGTERM"})
			return err
		}},
		{"forget a line only the journal has", func() error { _, err := w.Remove(ctx, added.Memory.ID); return err }},
	}
	for _, step := range steps {
		if err := step.write(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		assertShadowMakesTheFile(t, w, step.name)
	}
	if journal, err := os.ReadFile(w.ws.Shadows().ShadowJournalPath()); err != nil || bytes.Contains(journal, []byte(added.Memory.ID)) {
		t.Errorf("journal %q (%v): want it to hold the forget and the edit of the base's lines and nothing of %s", journal, err, added.Memory.ID)
	}
	now, err := os.ReadFile(w.ws.Shadows().ShadowPath())
	if err != nil {
		t.Fatal(err)
	}
	nowInfo, err := os.Stat(w.ws.Shadows().ShadowPath())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(now, base) || !os.SameFile(baseInfo, nowInfo) {
		t.Error("a fast-path write rewrote the shadow's base")
	}

	outsideChange(t, w)
	_, data := importByDiff(t, w)
	decoded, err := format.Decode("", data)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range decoded {
		want = append(want, m.Content)
	}
	assertFileMatchesIndex(t, w, want...)
}

// assertShadowMakesTheFile checks that the shadow's base with its journal
// applied is the memories file, byte for byte.
func assertShadowMakesTheFile(t *testing.T, w *Checkout, after string) {
	t.Helper()
	n, ok := w.ws.Shadows().Noted()
	if !ok {
		t.Fatalf("after %s: the shadow has no note vouching for it", after)
	}
	base, err := os.ReadFile(w.ws.Shadows().ShadowPath())
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := bytes.Cut(base, []byte("\n"))
	lines := map[string][]byte{}
	for _, l := range bytes.SplitAfter(rest, []byte("\n")) {
		if id, ok := format.LineID(l); ok {
			lines[id] = l
		}
	}
	if n.JournalHash != "" {
		data, err := os.ReadFile(w.ws.Shadows().ShadowJournalPath())
		if err != nil {
			t.Fatal(err)
		}
		journal, ok := acolytedir.DecodeJournal(data)
		if !ok || acolytedir.Sha256Hex(data) != n.JournalHash {
			t.Fatalf("after %s: the journal does not decode or is not the one the note names", after)
		}
		for id, l := range journal {
			if l == nil {
				if lines[id] == nil {
					t.Errorf("after %s: the journal removes %s, which the base does not have", after, id)
				}
				delete(lines, id)
			} else {
				lines[id] = l
			}
		}
	}
	made := append(bytes.Clone(header), '\n')
	for _, id := range slices.Sorted(maps.Keys(lines)) {
		made = append(made, lines[id]...)
	}
	file, err := os.ReadFile(format.MemoriesPath(w.Repo.Root))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(made, file) {
		t.Errorf("after %s: base and journal make\n%s\nwant the file\n%s", after, made, file)
	}
	if acolytedir.Sha256Hex(file) != n.Hash {
		t.Errorf("after %s: the note names another file", after)
	}
}
