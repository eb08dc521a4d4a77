package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// The patch helpers must produce exactly the canonical encoding that a full
// rewrite would, wherever the line goes.
func TestPatchLinesMatchTheCanonicalEncoding(t *testing.T) {
	var mems []memory.Memory
	for i := range 5 {
		mems = append(mems, stored(fmt.Sprintf("01B%d", 2*i), fmt.Sprintf("fact number %d", i), t0))
	}
	data := Encode(mems)
	for _, id := range []string{"01A0", "01B3", "01B9", "01C0"} {
		m := stored(id, "a new fact "+id, t0)
		parts, err := insertLine(data, m)
		if err != nil {
			t.Fatalf("insert %s: %v", id, err)
		}
		if got, want := bytes.Join(parts, nil), Encode(append(slices.Clone(mems), m)); !bytes.Equal(got, want) {
			t.Errorf("insert %s:\n%s\nwant\n%s", id, got, want)
		}
	}
	for _, gone := range [][]string{{"01B0"}, {"01B8"}, {"01B2", "01B6"}, {"01B0", "01B2", "01B4", "01B6", "01B8"}} {
		parts, err := removeLines(data, setOf(gone...))
		if err != nil {
			t.Fatalf("remove %v: %v", gone, err)
		}
		kept := slices.DeleteFunc(slices.Clone(mems), func(m memory.Memory) bool { return slices.Contains(gone, m.ID) })
		if got, want := bytes.Join(parts, nil), Encode(kept); !bytes.Equal(got, want) {
			t.Errorf("remove %v:\n%s\nwant\n%s", gone, got, want)
		}
	}
	if _, err := removeLines(data, setOf("01B0", "nope")); !errors.Is(err, errNotPatchable) {
		t.Errorf("removing an id the file lacks: %v, want errNotPatchable", err)
	}
	if _, err := insertLine(data, mems[2]); !errors.Is(err, errNotPatchable) {
		t.Errorf("inserting an id the file has: %v, want errNotPatchable", err)
	}
	if _, err := insertLine(bytes.TrimSuffix(data, []byte("\n")), stored("01C", "x", t0)); !errors.Is(err, errNotPatchable) {
		t.Errorf("a file without its final newline: %v, want errNotPatchable", err)
	}
}

func setOf(ids ...string) map[string]bool {
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// Through the workspace: adds and removes take the patch path while the
// index matches the file, and a file changed behind acolyte's back (a pull
// without hooks) is imported whole first, so nothing it added is lost.
func TestProjectWritesPatchAndStayInStep(t *testing.T) {
	w := workspaceIn(t)
	ctx := t.Context()
	first, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: "the parser is hand written"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: "the cache is per request"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: "The  parser is HAND written"})
	if err != nil || !again.Existing || again.Memory.ID != first.Memory.ID {
		t.Fatalf("duplicate add: %+v, %v; want the existing %s", again, err, first.Memory.ID)
	}
	assertFileMatchesIndex(t, w, "the cache is per request", "the parser is hand written")
	m, err := w.store.Prepare(w.vis, memory.Draft{Scope: memory.ScopeProject, Content: "logs go to stderr"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.addPatched(ctx, m); err != nil {
		t.Fatalf("with the index in step, an add patches: %v", err)
	}
	if err := w.removePatched(ctx, []string{m.ID}); err != nil {
		t.Fatalf("with the index in step, a remove patches: %v", err)
	}

	// Someone else's line arrives by git, unseen by any hook.
	path := MemoriesPath(w.Repo.Root)
	mems, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	teammate := stored(memory.NewID(time.Now().Add(time.Hour)), "the scheduler runs at midnight UTC", t0)
	if err := WriteFile(path, append(mems, teammate)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.addPatched(ctx, m); !errors.Is(err, errNotPatchable) {
		t.Fatalf("a file changed behind acolyte's back must not be patched: %v", err)
	}
	if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Content: "billing retries three times"}); err != nil {
		t.Fatal(err)
	}
	assertFileMatchesIndex(t, w, "billing retries three times", "the cache is per request", "the parser is hand written", "the scheduler runs at midnight UTC")

	if _, err := w.Remove(ctx, second.Memory.ID, teammate.ID); err != nil {
		t.Fatal(err)
	}
	assertFileMatchesIndex(t, w, "billing retries three times", "the parser is hand written")
}

// assertFileMatchesIndex checks that the file is canonical and that the
// file and the index hold exactly want, in any order.
func assertFileMatchesIndex(t *testing.T, w *Workspace, want ...string) {
	t.Helper()
	data, err := os.ReadFile(MemoriesPath(w.Repo.Root))
	if err != nil {
		t.Fatal(err)
	}
	mems, err := Decode("memories.jsonl", data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, Encode(mems)) {
		t.Errorf("the file is not canonical:\n%s", data)
	}
	var inFile []string
	for _, m := range mems {
		inFile = append(inFile, m.Content)
	}
	slices.Sort(inFile)
	slices.Sort(want)
	if !slices.Equal(inFile, want) {
		t.Errorf("file holds %q, want %q", inFile, want)
	}
	indexed := projectContents(t, w)
	slices.Sort(indexed)
	if !slices.Equal(indexed, want) {
		t.Errorf("index holds %q, want %q", indexed, want)
	}
	if got := strings.Count(string(data), "\n"); got != len(want)+1 {
		t.Errorf("file has %d lines, want %d", got, len(want)+1)
	}
}
