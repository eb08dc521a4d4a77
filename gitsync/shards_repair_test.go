package gitsync

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/memory"
)

// shardDamages are the ways a shard is damaged beyond decoding as a whole.
var shardDamages = []struct {
	name  string
	bytes func(good []byte) []byte
}{
	{"conflict markers", func(good []byte) []byte {
		return append(append([]byte("<<<<<<< HEAD\n"), good...), "=======\n>>>>>>> side\n"...)
	}},
	{"a byte order mark", func(good []byte) []byte { return append([]byte("\xef\xbb\xbf"), good...) }},
	{"no header line", func(good []byte) []byte { _, rest, _ := strings.Cut(string(good), "\n"); return []byte(rest) }},
	{"binary garbage", func([]byte) []byte { return []byte("\x00\x01\x02\xff\xfe garbage\x00\n") }},
	{"emptied", func([]byte) []byte { return []byte{} }},
}

// An import of a damaged shard keeps the shard's shadow as it last was
// good, the copy sync repairs it from.
func TestADamagedShardKeepsItsLastGoodShadow(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	for _, damage := range shardDamages {
		t.Run(damage.name, func(t *testing.T) {
			w, mems := splitWorkspace(t, format.SplitAt+50)
			shard := format.ShardOf(mems[0].ID)
			path := filepath.Join(w.Repo.Root, format.Dir, format.ShardFile(shard))
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, damage.bytes(good), 0o644); err != nil {
				t.Fatal(err)
			}
			w.Warn = func(string) {}
			if _, err := w.List(t.Context(), memory.Filter{Scope: memory.ScopeProject}); err != nil {
				t.Fatal(err)
			}
			shadow, err := os.ReadFile(filepath.Join(project.Shards{}.ShardShadowDir(w.ws), shard+".jsonl"))
			if err != nil || string(shadow) != string(good) {
				t.Fatalf("the shadow after importing the damaged shard: %d bytes (%v), want the %d good ones", len(shadow), err, len(good))
			}
		})
	}
}

// Sync repairs a damaged shard of a project imported before the damage,
// from the file's readable lines, its shadow and HEAD, the newest of each
// memory winning: check passes, every memory is back, one edited since
// the commit keeps its edit, one forgotten stays forgotten, and the
// damaged file is kept.
func TestSyncRepairsADamagedShard(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	for _, damage := range shardDamages {
		t.Run(damage.name, func(t *testing.T) {
			w, mems := splitWorkspace(t, format.SplitAt+50)
			rel := format.ShardFile(format.ShardOf(mems[0].ID))
			var inShard []string
			for _, m := range mems {
				if format.ShardFile(format.ShardOf(m.ID)) == rel {
					inShard = append(inShard, m.ID)
				}
			}
			if len(inShard) < 3 {
				t.Fatalf("%s holds %d memories, the test needs 3", rel, len(inShard))
			}
			runGit(t, w.Repo.Root, "add", "-A")
			runGit(t, w.Repo.Root, "commit", "-qm", "split")
			// Since the commit: one memory forgotten, one edited.
			forgotten, edited := inShard[1], inShard[2]
			if _, err := w.Remove(t.Context(), forgotten); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Edit(t.Context(), edited, memory.Revision{Content: "An edit made after the commit."}); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(w.Repo.Root, format.Dir, rel)
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			damaged := damage.bytes(good)
			if err := os.WriteFile(path, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			var warnings []string
			w.Warn = func(m string) { warnings = append(warnings, m) }
			if _, err := w.List(t.Context(), memory.Filter{Scope: memory.ScopeProject}); err != nil {
				t.Fatal(err)
			}
			if len(warnings) == 0 {
				t.Fatal("the damaged shard was not noticed")
			}

			out, err := w.Sync(t.Context())
			if err != nil {
				t.Fatalf("sync: %v", err)
			}
			if len(out.Repaired) != 1 || !out.Repaired[0].Repaired || out.Repaired[0].File != format.Dir+"/"+rel {
				t.Fatalf("sync reported %+v, want %s repaired", out.Repaired, rel)
			}
			// Garbage is a line that decodes to nothing, with no id any
			// other source could have: said to be lost, by its number.
			wantLost := 0
			if damage.name == "binary garbage" {
				wantLost = 1
			}
			if r := out.Repaired[0]; r.Recovered != len(inShard)-1 || len(r.Lost) != wantLost || wantLost > 0 && !strings.HasPrefix(r.Lost[0], "line 1 of "+format.Dir+"/"+rel) {
				t.Errorf("repair of %s: %+v, want %d recovered and %d lines lost", rel, r, len(inShard)-1, wantLost)
			}
			if kept, err := os.ReadFile(out.Repaired[0].Kept); err != nil || string(kept) != string(damaged) {
				t.Errorf("the damaged original at %q: %v, or not its bytes", out.Repaired[0].Kept, err)
			}
			report, err := Check(w.Repo.Root)
			if err != nil {
				t.Fatal(err)
			}
			if !report.OK {
				t.Errorf("check after the repair: %+v", report.Problems)
			}
			warnings = nil
			for _, c := range []*Checkout{w, workspaceAt(t, w.Repo.Root)} {
				c.Warn = func(m string) { warnings = append(warnings, m) }
				listed, err := c.List(t.Context(), memory.Filter{Scope: memory.ScopeProject})
				if err != nil {
					t.Fatal(err)
				}
				if len(listed) != len(mems)-1 {
					t.Errorf("%d project memories after the repair, want %d", len(listed), len(mems)-1)
				}
				for _, m := range listed {
					switch m.ID {
					case forgotten:
						t.Errorf("%s, forgotten before the damage, came back", m.ID)
					case edited:
						if m.Content != "An edit made after the commit." {
							t.Errorf("%s lost its edit: %q", m.ID, m.Content)
						}
					}
				}
				res, err := c.Search(t.Context(), memory.Query{Text: "an edit made after the commit"})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(res, func(r memory.Result) bool { return r.Memory.ID == edited }) {
					t.Errorf("search does not find %s after the repair", edited)
				}
			}
			if len(warnings) > 0 {
				t.Errorf("warnings after the repair: %q", warnings)
			}
		})
	}
}

// A shard damaged in the commit a clone starts from has no shadow, and
// HEAD holds the same damage: sync says it could not recover it, with the
// fix, fails, and touches no other shard.
func TestSyncSaysWhatItCouldNotRecover(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	w, mems := splitWorkspace(t, format.SplitAt+50)
	rel := format.ShardFile(format.ShardOf(mems[0].ID))
	path := filepath.Join(w.Repo.Root, format.Dir, rel)
	garbage := []byte("\x00\x01\x02\xff\xfe garbage\x00\n")
	if err := os.WriteFile(path, garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	runGit(t, w.Repo.Root, "add", "-A")
	runGit(t, w.Repo.Root, "commit", "-qm", "damaged")
	clone := filepath.Join(t.TempDir(), "clone")
	runGit(t, "", "clone", "-q", w.Repo.Root, clone)
	before := shardBytes(t, clone)

	c := workspaceAt(t, clone)
	c.Warn = func(string) {}
	out, err := c.Sync(t.Context())
	if !errors.Is(err, ErrShardUnrecoverable) || !strings.Contains(err.Error(), "git checkout -- "+format.Dir+"/"+rel) {
		t.Fatalf("sync: %v, want it to say %s could not be recovered, with the fix", err, rel)
	}
	if len(out.Repaired) != 1 || out.Repaired[0].Repaired || out.Repaired[0].Fix == "" {
		t.Errorf("sync reported %+v", out.Repaired)
	}
	if !strings.Contains(out.Repaired[0].String(), "could not be recovered") {
		t.Errorf("the report says %q", out.Repaired[0].String())
	}
	if after := shardBytes(t, clone); !maps.Equal(before, after) {
		t.Error("sync changed the shards, with one it could not recover")
	}
}

// shardBytes is every shard's bytes under root, by name.
func shardBytes(t *testing.T, root string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(acolytedir.ShardsRel)))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(acolytedir.ShardsRel), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

// Inside conflict markers, the other side's lines are read too: a memory
// of another shard found there ends up in its own shard, and a line that
// does not decode, whose id no other source has, is named as lost.
func TestSyncRepairReadsBothSidesOfAConflict(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	w, mems := splitWorkspace(t, format.SplitAt+50)
	shard := format.ShardOf(mems[0].ID)
	rel := format.ShardFile(shard)
	path := filepath.Join(w.Repo.Root, format.Dir, rel)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := mems[len(mems)-1].UpdatedAt.Add(time.Hour)
	stray := memory.Memory{Kind: memory.KindStored, Content: "A memory from the other side of the conflict.", CreatedAt: at, UpdatedAt: at}
	for i := 900000; stray.ID == "" || format.ShardOf(stray.ID) == shard; i++ {
		stray.ID = fmt.Sprintf("01J%023d", i)
	}
	broken := fmt.Sprintf(`{"id":"01J%023d","content":`, 999999)
	damaged := "<<<<<<< HEAD\n" + string(good) + "=======\n" + string(format.Line(stray)) + broken + "\n>>>>>>> side\n"
	if err := os.WriteFile(path, []byte(damaged), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Warn = func(string) {}
	out, err := w.Sync(t.Context())
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	if len(out.Repaired) != 1 || len(out.Repaired[0].Lost) != 1 {
		t.Fatalf("sync reported %+v, want the broken line lost", out.Repaired)
	}
	brokenLine := strings.Count(damaged[:strings.Index(damaged, broken)], "\n") + 1
	if want := fmt.Sprintf("line %d of %s/%s", brokenLine, format.Dir, rel); !strings.HasPrefix(out.Repaired[0].Lost[0], want) {
		t.Errorf("lost: %q, want it to start %q", out.Repaired[0].Lost[0], want)
	}
	report, err := Check(w.Repo.Root)
	if err != nil {
		t.Fatal(err)
	}
	if !report.OK {
		t.Errorf("check after the repair: %+v", report.Problems)
	}
	where, _ := onDisk(t, w.Repo.Root)
	if got, want := where[stray.ID], format.ShardFile(format.ShardOf(stray.ID)); got != want {
		t.Errorf("the memory from the other side is in %q, want its own shard %s", got, want)
	}
	listed, err := workspaceAt(t, w.Repo.Root).List(t.Context(), memory.Filter{Scope: memory.ScopeProject})
	if err != nil || len(listed) != len(mems)+1 {
		t.Errorf("%d project memories after the repair (%v), want %d", len(listed), err, len(mems)+1)
	}
}

// A clone that never imported a shard has no shadow of it: a shard
// damaged there is repaired from HEAD.
func TestSyncRepairsFromHEADWithoutAShadow(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	w, mems := splitWorkspace(t, format.SplitAt+50)
	runGit(t, w.Repo.Root, "add", "-A")
	runGit(t, w.Repo.Root, "commit", "-qm", "split")
	clone := filepath.Join(t.TempDir(), "clone")
	runGit(t, "", "clone", "-q", w.Repo.Root, clone)
	rel := format.ShardFile(format.ShardOf(mems[0].ID))
	path := filepath.Join(clone, format.Dir, rel)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("\x00\x01\x02\xff\xfe garbage\x00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := workspaceAt(t, clone)
	c.Warn = func(string) {}
	out, err := c.Sync(t.Context())
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	inShard, _ := format.Decode(rel, good)
	if len(out.Repaired) != 1 || out.Repaired[0].From["head"] != len(inShard) || out.Repaired[0].From["shadow"] != 0 {
		t.Fatalf("sync reported %+v, want all %d memories from HEAD", out.Repaired, len(inShard))
	}
	if got, _ := os.ReadFile(path); string(got) != string(good) {
		t.Error("the shard repaired from HEAD is not HEAD's")
	}
	listed, err := c.List(t.Context(), memory.Filter{Scope: memory.ScopeProject})
	if err != nil || len(listed) != len(mems) {
		t.Errorf("%d project memories after the repair (%v), want %d", len(listed), err, len(mems))
	}
}

// The post-merge hook syncs a project the merge left untidy, and so
// repairs a shard it left damaged: the hook says so, as sync does.
func TestPostMergeSaysWhatItRepaired(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	w, mems := splitWorkspace(t, format.SplitAt+50)
	rel := format.ShardFile(format.ShardOf(mems[0].ID))
	path := filepath.Join(w.Repo.Root, format.Dir, rel)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append([]byte("\xef\xbb\xbf"), good...), 0o644); err != nil {
		t.Fatal(err)
	}
	// A line in the inbox, as an acolyte older than the split writes.
	at := mems[len(mems)-1].UpdatedAt.Add(time.Hour)
	late := memory.Memory{ID: fmt.Sprintf("01J%023d", 900000), Kind: memory.KindStored, Content: "Written to the inbox by an older acolyte.", CreatedAt: at, UpdatedAt: at}
	inbox := format.MemoriesPath(w.Repo.Root)
	data, err := os.ReadFile(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inbox, append(data, format.Line(late)...), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	w.Warn = func(m string) { warnings = append(warnings, m) }
	if _, err := w.RunHook(t.Context(), "post-merge", []string{"0"}); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(warnings, func(m string) bool { return strings.HasPrefix(m, "repaired "+format.Dir+"/"+rel) }) {
		t.Errorf("the hook's warnings do not say it repaired %s: %q", rel, warnings)
	}
	if got, _ := os.ReadFile(path); string(got) != string(good) {
		t.Errorf("%s was not repaired", rel)
	}
}
