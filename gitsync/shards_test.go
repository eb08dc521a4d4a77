package gitsync

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/memory"
)

// storedMemories makes n stored project memories with time-ordered ids.
func storedMemories(n int) []memory.Memory {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mems := make([]memory.Memory, n)
	for i := range mems {
		at := t0.Add(time.Duration(i) * time.Second)
		mems[i] = memory.Memory{ID: fmt.Sprintf("01J%023d", i), Kind: memory.KindStored, Content: fmt.Sprintf("fact number %d about how the tests run", i), CreatedAt: at, UpdatedAt: at}
	}
	return mems
}

// splitWorkspace is a workspace whose project holds n memories, written as
// one file and synced: past format.SplitAt, the sync splits it.
func splitWorkspace(t *testing.T, n int) (*Checkout, []memory.Memory) {
	t.Helper()
	w := workspaceIn(t)
	mems := storedMemories(n)
	if err := os.MkdirAll(filepath.Join(w.Repo.Root, format.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := format.WriteFile(format.MemoriesPath(w.Repo.Root), mems); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return w, mems
}

// onDisk reads what a split project's files hold: every memory by the
// shard file it is in, and the inbox's bytes.
func onDisk(t *testing.T, root string) (where map[string]string, inbox []byte) {
	t.Helper()
	where = make(map[string]string)
	shards, strays, err := acolytedir.ShardFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(strays) > 0 {
		t.Errorf("stray files in %s: %v", acolytedir.ShardsRel, strays)
	}
	for _, rel := range shards {
		data, err := os.ReadFile(filepath.Join(root, format.Dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		mems, err := format.Decode(rel, data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, format.Encode(mems)) {
			t.Errorf("%s is not canonical", rel)
		}
		for _, m := range mems {
			where[m.ID] = rel
		}
	}
	inbox, err = os.ReadFile(format.MemoriesPath(root))
	if err != nil {
		t.Fatal(err)
	}
	return where, inbox
}

func TestSyncSplitsAProjectPastSplitAt(t *testing.T) {
	w, mems := splitWorkspace(t, format.SplitAt+1)
	where, inbox := onDisk(t, w.Repo.Root)
	if !bytes.Equal(inbox, format.Encode(nil)) {
		t.Errorf("the inbox holds more than its header:\n%.300s", inbox)
	}
	if len(where) != len(mems) {
		t.Fatalf("the shards hold %d memories, want %d", len(where), len(mems))
	}
	for _, m := range mems {
		if want := format.ShardFile(format.ShardOf(m.ID)); where[m.ID] != want {
			t.Fatalf("%s is in %q, want %s", m.ID, where[m.ID], want)
		}
	}
	if got := len(projectContents(t, w)); got != len(mems) {
		t.Errorf("the index holds %d memories, want %d", got, len(mems))
	}
	attrs, err := os.ReadFile(filepath.Join(w.Repo.Root, format.Dir, acolytedir.AttributesFile))
	if err != nil || !strings.Contains(string(attrs), project.ShardsUnionAttribute) {
		t.Errorf(".acolyte/.gitattributes lacks %q: %q, %v", project.ShardsUnionAttribute, attrs, err)
	}
	if rep, err := Check(w.Repo.Root); err != nil || !rep.OK {
		t.Errorf("check of the split project: %+v, %v", rep, err)
	}
	// A second sync changes nothing.
	before, _ := onDisk(t, w.Repo.Root)
	if s, err := w.Sync(t.Context()); err != nil || len(s.Changes) > 0 {
		t.Fatalf("second sync: %+v, %v", s, err)
	}
	after, _ := onDisk(t, w.Repo.Root)
	if len(before) != len(after) {
		t.Errorf("a second sync moved memories: %d → %d", len(before), len(after))
	}
}

// A split project is written shard by shard: an add, an edit and a forget
// each rewrite the shard of the memory they touch and no other file but
// forgotten.jsonl.
func TestWritesToASplitProjectTouchOnlyTheirShard(t *testing.T) {
	w, mems := splitWorkspace(t, format.SplitAt+10)
	ctx := t.Context()
	mtimes := func() map[string]time.Time {
		out := make(map[string]time.Time)
		shards, _, _ := acolytedir.ShardFiles(w.Repo.Root)
		for _, rel := range append(shards, format.MemoriesFile) {
			fi, err := os.Stat(filepath.Join(w.Repo.Root, format.Dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			out[rel] = fi.ModTime()
		}
		return out
	}
	// Old enough that a rewrite within the clock's tick still shows.
	old := time.Now().Add(-time.Hour)
	age := func() {
		shards, _, _ := acolytedir.ShardFiles(w.Repo.Root)
		for _, rel := range append(shards, format.MemoriesFile) {
			os.Chtimes(filepath.Join(w.Repo.Root, format.Dir, rel), old, old)
		}
	}
	changed := func(before map[string]time.Time) []string {
		var out []string
		for rel, at := range mtimes() {
			if !at.Equal(before[rel]) {
				out = append(out, rel)
			}
		}
		slices.Sort(out)
		return out
	}

	age()
	if _, err := w.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	before := mtimes()
	added, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "the release branch is cut on Thursdays"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changed(before), []string{format.ShardFile(format.ShardOf(added.Memory.ID))}; !slices.Equal(got, want) {
		t.Errorf("an add rewrote %v, want %v", got, want)
	}

	age()
	before = mtimes()
	target := mems[7]
	if _, err := w.Edit(ctx, target.ID, memory.Revision{Content: "fact number 7, revised"}); err != nil {
		t.Fatal(err)
	}
	if got, want := changed(before), []string{format.ShardFile(format.ShardOf(target.ID))}; !slices.Equal(got, want) {
		t.Errorf("an edit rewrote %v, want %v", got, want)
	}

	age()
	before = mtimes()
	gone := mems[9]
	if _, err := w.Remove(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if got, want := changed(before), []string{format.ShardFile(format.ShardOf(gone.ID))}; !slices.Equal(got, want) {
		t.Errorf("a forget rewrote %v, want %v", got, want)
	}
	where, _ := onDisk(t, w.Repo.Root)
	if _, ok := where[gone.ID]; ok {
		t.Errorf("the forgotten %s is still in %s", gone.ID, where[gone.ID])
	}
	if where[added.Memory.ID] == "" {
		t.Errorf("the added %s is in no shard", added.Memory.ID)
	}
	got := projectContents(t, w)
	if !slices.Contains(got, "fact number 7, revised") || slices.Contains(got, gone.Content) || !slices.Contains(got, "the release branch is cut on Thursdays") {
		t.Errorf("the index does not follow the writes")
	}
	if rep, err := Check(w.Repo.Root); err != nil || !rep.OK {
		t.Errorf("check after the writes: %+v, %v", rep, err)
	}
}

// A shard changed behind acolyte's back (a checkout, a hand edit) is
// imported by the next command, and so is a line an older acolyte wrote
// to the inbox; the next write moves that line to its shard.
func TestASplitProjectImportsOutsideChanges(t *testing.T) {
	w, mems := splitWorkspace(t, format.SplitAt+1)
	ctx := t.Context()
	target := mems[3]
	rel := format.ShardFile(format.ShardOf(target.ID))
	path := filepath.Join(w.Repo.Root, format.Dir, rel)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(data, []byte(target.Content), []byte("fact number 3, edited by hand"), 1)
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	older := storedMemories(1)[0]
	older.ID, older.Content = "01J99999999999999999999999", "written by an acolyte that predates the split"
	inbox := format.Encode([]memory.Memory{older})
	if err := os.WriteFile(format.MemoriesPath(w.Repo.Root), inbox, 0o644); err != nil {
		t.Fatal(err)
	}
	got := projectContents(t, w)
	if !slices.Contains(got, "fact number 3, edited by hand") || !slices.Contains(got, older.Content) {
		t.Fatalf("the outside changes were not imported")
	}
	if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "one more"}); err != nil {
		t.Fatal(err)
	}
	where, inboxNow := onDisk(t, w.Repo.Root)
	if !bytes.Equal(inboxNow, format.Encode(nil)) {
		t.Errorf("the write left the inbox holding lines:\n%s", inboxNow)
	}
	if where[older.ID] != format.ShardFile(format.ShardOf(older.ID)) {
		t.Errorf("the inbox's line went to %q", where[older.ID])
	}
}

// The same id in the inbox and in a shard, as a merge across the split
// leaves it, is read once: the later update wins, as in one file.
func TestASplitProjectResolvesAnIDOnTwoFiles(t *testing.T) {
	w, mems := splitWorkspace(t, format.SplitAt+1)
	newer := mems[5]
	newer.Content, newer.UpdatedAt = "fact number 5, the later edit", newer.UpdatedAt.Add(time.Hour)
	if err := os.WriteFile(format.MemoriesPath(w.Repo.Root), format.Encode([]memory.Memory{newer}), 0o644); err != nil {
		t.Fatal(err)
	}
	got := projectContents(t, w)
	if !slices.Contains(got, newer.Content) || slices.Contains(got, mems[5].Content) {
		t.Errorf("the later edit did not win")
	}
	if len(got) != len(mems) {
		t.Errorf("%d memories, want %d", len(got), len(mems))
	}
	if _, err := w.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	where, inbox := onDisk(t, w.Repo.Root)
	if !bytes.Equal(inbox, format.Encode(nil)) || where[newer.ID] == "" {
		t.Errorf("sync did not move the inbox's line to its shard")
	}
}

// check names each file of a split project that sync would rewrite, and
// sync leaves them all as check wants them.
func TestCheckNamesTheFileOfEachProblemInASplitProject(t *testing.T) {
	w, mems := splitWorkspace(t, format.SplitAt+1)
	root := w.Repo.Root
	// A memory moved by hand into the wrong shard, a shard emptied to its
	// header, and a line an older acolyte wrote to the inbox.
	moved := mems[0]
	home := format.ShardFile(format.ShardOf(moved.ID))
	var wrong, emptied string
	shards, _, _ := acolytedir.ShardFiles(root)
	for _, rel := range shards {
		if rel != home && wrong == "" {
			wrong = rel
		} else if rel != home && rel != wrong && emptied == "" {
			emptied = rel
		}
	}
	read := func(rel string) []memory.Memory {
		data, err := os.ReadFile(filepath.Join(root, format.Dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		ms, err := format.Decode(rel, data)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	write := func(rel string, ms []memory.Memory) {
		if err := os.WriteFile(filepath.Join(root, format.Dir, rel), format.Encode(ms), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	emptiedHeld := read(emptied)
	write(home, slices.DeleteFunc(read(home), func(m memory.Memory) bool { return m.ID == moved.ID }))
	write(wrong, append(read(wrong), moved))
	write(emptied, nil)
	write(format.MemoriesFile, emptiedHeld)

	rep, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK {
		t.Fatal("check passed a split project with misplaced lines")
	}
	want := map[string]string{
		format.Dir + "/" + wrong:               "belongs in " + format.Dir + "/" + home,
		format.Dir + "/" + emptied:             "holds no memory",
		format.Dir + "/" + format.MemoriesFile: fmt.Sprintf("holds %d memories", len(emptiedHeld)),
	}
	for file, msg := range want {
		if !slices.ContainsFunc(rep.Problems, func(p Problem) bool { return p.File == file && strings.Contains(p.Message, msg) }) {
			t.Errorf("no problem in %s saying %q; got %+v", file, msg, rep.Problems)
		}
	}
	if _, err := w.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if rep, err := Check(root); err != nil || !rep.OK {
		t.Errorf("check after sync: %+v, %v", rep.Problems, err)
	}
	if got := len(projectContents(t, w)); got != len(mems) {
		t.Errorf("%d memories after sync, want %d", got, len(mems))
	}
}

// While the import state vouches for every file, a write to a split
// project takes the fast path, which reads and writes its own shard; a
// shard changed behind acolyte's back, or lines in the inbox, send it to
// the full path.
func TestSplitWritesTakeTheFastPathOnlyWhileTheStateHolds(t *testing.T) {
	w, mems := splitWorkspace(t, format.SplitAt+1)
	w.ws.Settle = 0
	ctx := t.Context()
	if _, err := w.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := w.ws.Store.Prepare(w.ws.Vis, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "added by the fast path"})
	if err != nil {
		t.Fatal(err)
	}
	shardPath := filepath.Join(w.Repo.Root, format.Dir, format.ShardFile(format.ShardOf(m.ID)))
	before, err := os.Stat(shardPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (project.Shards{Root: w.Repo.Root}).Add(ctx, w.ws, m); err != nil {
		t.Fatalf("add: %v", err)
	}
	// A new id sorts last in its shard: the line is appended in place.
	if after, err := os.Stat(shardPath); err != nil || !os.SameFile(before, after) || after.Size() <= before.Size() {
		t.Errorf("the add did not append to its shard in place: %v", err)
	}
	edited := mems[20]
	edited.Content, edited.UpdatedAt = "edited by the fast path", time.Now().UTC()
	edited.Scope, edited.ScopeKey = memory.ScopeProject, w.Repo.Root
	if err := (project.Shards{Root: w.Repo.Root}).Replace(ctx, w.ws, edited); err != nil {
		t.Fatalf("edit: %v", err)
	}
	if err := (project.Shards{Root: w.Repo.Root}).Remove(ctx, w.ws, []memory.Memory{mems[30]}, time.Now()); err != nil {
		t.Fatalf("forget: %v", err)
	}
	got := projectContents(t, w)
	if !slices.Contains(got, m.Content) || !slices.Contains(got, edited.Content) || slices.Contains(got, mems[30].Content) {
		t.Fatal("the index does not follow the fast path's writes")
	}
	where, _ := onDisk(t, w.Repo.Root)
	if where[m.ID] == "" || where[mems[30].ID] != "" {
		t.Fatal("the shards do not follow the fast path's writes")
	}
	if rep, err := Check(w.Repo.Root); err != nil || !rep.OK {
		t.Fatalf("check after the fast path's writes: %+v, %v", rep.Problems, err)
	}
	// A shard written behind acolyte's back: the state no longer vouches
	// for it, so a write to it takes the full path, which imports the
	// change first; a write to another shard goes on, and leaves the
	// changed shard's record as it was, for the next command to import.
	m2, _ := w.ws.Store.Prepare(w.ws.Vis, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "after a hand edit"})
	shard := format.ShardOf(m2.ID)
	i := slices.IndexFunc(mems, func(m memory.Memory) bool {
		return format.ShardOf(m.ID) == shard && m.ID != edited.ID && m.ID != mems[30].ID
	})
	j := slices.IndexFunc(mems, func(m memory.Memory) bool {
		return format.ShardOf(m.ID) != shard && format.ShardOf(m.ID) != format.ShardOf(m2.ID)
	})
	handEdit := func(m memory.Memory, text string) {
		path := filepath.Join(w.Repo.Root, format.Dir, format.ShardFile(format.ShardOf(m.ID)))
		data, _ := os.ReadFile(path)
		if err := os.WriteFile(path, bytes.Replace(data, []byte(m.Content), []byte(text), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	handEdit(mems[i], "changed by hand in the shard written to")
	if _, err := (project.Shards{Root: w.Repo.Root}).Add(ctx, w.ws, m2); !errors.Is(err, format.ErrNotPatchable) {
		t.Fatalf("the fast path wrote over a shard changed behind its back: %v", err)
	}
	if _, err := w.Add(ctx, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "after a hand edit"}); err != nil {
		t.Fatal(err)
	}
	got = projectContents(t, w)
	if !slices.Contains(got, "changed by hand in the shard written to") || !slices.Contains(got, "after a hand edit") {
		t.Fatal("the full path lost the hand edit or the add")
	}
	handEdit(mems[j], "changed by hand in another shard")
	m3, _ := w.ws.Store.Prepare(w.ws.Vis, memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "written beside a hand edit"})
	if format.ShardOf(m3.ID) == format.ShardOf(mems[j].ID) {
		t.Skip("the new memory fell in the hand-edited shard")
	}
	if _, err := (project.Shards{Root: w.Repo.Root}).Add(ctx, w.ws, m3); err != nil {
		t.Fatalf("a write to another shard than the one changed: %v", err)
	}
	if got := projectContents(t, w); !slices.Contains(got, "changed by hand in another shard") || !slices.Contains(got, m3.Content) {
		t.Fatal("the next command did not import the shard changed beside the write")
	}
}

// A checkout that changes one shard is imported from that shard and its
// shadow alone: an edit, a removal and an addition in it come to the
// index as such. Without a shadow it trusts, the import runs whole.
func TestAShardChangedOutsideIsImportedAlone(t *testing.T) {
	w, mems := splitWorkspace(t, format.SplitAt+1)
	w.ws.Settle = 0
	ctx := t.Context()
	if _, err := w.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	shard := format.ShardOf(mems[0].ID)
	var in []memory.Memory
	for _, m := range mems {
		if format.ShardOf(m.ID) == shard {
			in = append(in, m)
		}
	}
	if len(in) < 3 {
		t.Fatalf("shard %s holds %d memories", shard, len(in))
	}
	edited, gone := in[0], in[1]
	edited.Content = "edited on another branch"
	var added memory.Memory
	for i := 0; ; i++ {
		added = storedMemories(1)[0]
		added.ID, added.Content = fmt.Sprintf("01K%023d", i), "added on another branch"
		if format.ShardOf(added.ID) == shard {
			break
		}
	}
	next := append([]memory.Memory{edited, added}, in[2:]...)
	rel := format.ShardFile(shard)
	if err := os.WriteFile(filepath.Join(w.Repo.Root, format.Dir, rel), format.Encode(next), 0o644); err != nil {
		t.Fatal(err)
	}
	last, err := w.ws.Store.GetState(ctx, w.ws.StateKey())
	if err != nil {
		t.Fatal(err)
	}
	files, ok := acolytedir.StateFiles(last)
	if !ok {
		t.Fatal("the import state of a split project has no file table")
	}
	var imp Imported
	err = w.ws.Locked(ctx, func() (err error) {
		imp, ok, err = (project.Shards{Root: w.Repo.Root}).ImportShards(ctx, w.ws, last, files)
		return err
	})
	if err != nil || !ok {
		t.Fatalf("the shard was not imported alone: %v", err)
	}
	if imp.Added != 1 || imp.Updated != 1 || imp.Removed != 1 || imp.Unchanged != len(in)-2 {
		t.Errorf("import %+v, want 1 added, 1 updated, 1 removed, %d unchanged", imp.ReplaceStats, len(in)-2)
	}
	got := projectContents(t, w)
	if !slices.Contains(got, edited.Content) || !slices.Contains(got, added.Content) || slices.Contains(got, gone.Content) || len(got) != len(mems) {
		t.Errorf("the index does not follow the shard")
	}
	// The shadow is what the index holds: one changed behind acolyte's
	// back is not trusted.
	next = next[1:]
	if err := os.WriteFile(filepath.Join(w.Repo.Root, format.Dir, rel), format.Encode(next), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project.Shards{Root: w.Repo.Root}.ShardShadowDir(w.ws), shard+".jsonl"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	last, _ = w.ws.Store.GetState(ctx, w.ws.StateKey())
	files, _ = acolytedir.StateFiles(last)
	err = w.ws.Locked(ctx, func() (err error) {
		_, ok, err = (project.Shards{Root: w.Repo.Root}).ImportShards(ctx, w.ws, last, files)
		return err
	})
	if err != nil || ok {
		t.Fatalf("imported against a shadow that is not what the index holds: ok %v, %v", ok, err)
	}
	if got := projectContents(t, w); slices.Contains(got, edited.Content) || len(got) != len(mems)-1 {
		t.Errorf("the full import did not follow the shard")
	}
}

// StampsAt stamps a file as stamp does, where it is implemented, so that a
// stamp recorded through either is matched by the other.
func TestStampsAtIsStamp(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "00.jsonl"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, ok := git.StampsAt(dir, []string{"00.jsonl", "01.jsonl"})
	if !ok {
		t.Skip("stampsAt is not implemented here")
	}
	fi, err := os.Stat(filepath.Join(dir, "00.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want := git.Stamp(fi); got["00.jsonl"] != want || len(got) != 1 {
		t.Errorf("stampsAt = %v, want 00.jsonl: %s and no entry for the missing 01.jsonl", got, want)
	}
}

// A writer killed while it wrote a shard leaves a temporary file beside
// it, which git ignores and the next write that rewrites a shard removes
// (an add appends in place, and leaves it).
func TestAKilledShardWritersFileIsIgnoredAndRemoved(t *testing.T) {
	w, mems := splitWorkspace(t, format.SplitAt+1)
	temp := filepath.Join(w.Repo.Root, format.Dir, format.ShardsDir, atomicfile.TempPrefix+"00.jsonl-p999999-1234")
	if err := os.WriteFile(temp, []byte("half a shard"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := runGit(t, w.Repo.Root, "status", "--porcelain", "--untracked-files=all"); strings.Contains(st, atomicfile.TempPrefix) {
		t.Errorf("git would commit the temporary file:\n%s", st)
	}
	if got := len(projectContents(t, w)); got != format.SplitAt+1 {
		t.Errorf("%d memories beside a temporary file, want %d", got, format.SplitAt+1)
	}
	if _, err := w.Add(t.Context(), memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "written after the crash"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Remove(t.Context(), mems[3].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(temp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the next write left the temporary file: %v", err)
	}
}

// On a filesystem that keeps sub-millisecond times, a shard's stamp is
// trusted once the kernel's clock has moved on, not two seconds later.
func TestShardSettleIsShortWhereTimesAreFine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "00.jsonl")
	if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.ModTime().Nanosecond()%int(time.Millisecond) == 0 {
		if got := acolytedir.ShardSettle(fi, acolytedir.SettleTime); got != acolytedir.SettleTime {
			t.Errorf("a whole-millisecond time settles in %v, want %v", got, acolytedir.SettleTime)
		}
		t.Skip("this filesystem keeps whole milliseconds")
	}
	if got := acolytedir.ShardSettle(fi, acolytedir.SettleTime); got != acolytedir.FineSettle {
		t.Errorf("settle %v, want %v", got, acolytedir.FineSettle)
	}
	if got := acolytedir.ShardSettle(fi, 0); got != 0 {
		t.Errorf("a shorter settle is kept: got %v", got)
	}
	time.Sleep(acolytedir.FineSettle + 10*time.Millisecond)
	if acolytedir.SettledStamp(path, fi, nil, acolytedir.ShardSettle(fi, acolytedir.SettleTime)) == "" {
		t.Error("the shard's stamp is not trusted after fineSettle")
	}
}

// EmptyHash is what it says: the SHA-256 of no bytes.
func TestEmptyHashIsTheHashOfNothing(t *testing.T) {
	if got := acolytedir.Sha256Hex(nil); got != acolytedir.EmptyHash {
		t.Errorf("sha256 of nothing is %s, emptyHash says %s", got, acolytedir.EmptyHash)
	}
}
