package gitsync

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

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
	m, err := w.ws.Store.Prepare(w.ws.Vis, memory.Draft{Scope: memory.ScopeProject, Content: "logs go to stderr"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.ws.AddInPlace(ctx, m); err != nil {
		t.Fatalf("with the index in step, an add patches: %v", err)
	}
	if err := w.ws.RemoveInPlace(ctx, []memory.Memory{m}, time.Now()); err != nil {
		t.Fatalf("with the index in step, a remove patches: %v", err)
	}

	// Someone else's line arrives by git, unseen by any hook.
	path := format.MemoriesPath(w.Repo.Root)
	mems, err := format.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	teammate := stored(memory.NewID(time.Now().Add(time.Hour)), "the scheduler runs at midnight UTC", t0)
	if err := format.WriteFile(path, append(mems, teammate)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ws.AddInPlace(ctx, m); !errors.Is(err, format.ErrNotPatchable) {
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
func assertFileMatchesIndex(t *testing.T, w *Checkout, want ...string) {
	t.Helper()
	data, err := os.ReadFile(format.MemoriesPath(w.Repo.Root))
	if err != nil {
		t.Fatal(err)
	}
	mems, err := format.Decode("memories.jsonl", data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, format.Encode(mems)) {
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
