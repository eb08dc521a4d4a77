package gitsync

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// One damaged shard hides its own memories and no others: a fresh index
// finds every other memory, every command names the shard, check names
// it, a write is refused rather than drop what it cannot read, and once
// the shard is back the project is whole again.
func TestADamagedShardHidesOnlyItsOwnMemories(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	for _, damage := range []struct {
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
	} {
		t.Run(damage.name, func(t *testing.T) {
			w, mems := splitWorkspace(t, format.SplitAt+50)
			victim := mems[0]
			rel := format.ShardFile(format.ShardOf(victim.ID))
			path := filepath.Join(w.Repo.Root, format.Dir, rel)
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var inShard []string
			for _, m := range mems {
				if format.ShardFile(format.ShardOf(m.ID)) == rel {
					inShard = append(inShard, m.ID)
				}
			}
			if err := os.WriteFile(path, damage.bytes(good), 0o644); err != nil {
				t.Fatal(err)
			}

			fresh := workspaceAt(t, w.Repo.Root) // a clone's first command: an empty index
			var warnings []string
			fresh.Warn = func(m string) { warnings = append(warnings, m) }
			listed, err := fresh.List(t.Context(), memory.Filter{Scope: memory.ScopeProject})
			if err != nil {
				t.Fatal(err)
			}
			if want := len(mems) - len(inShard); len(listed) != want {
				t.Fatalf("a fresh index holds %d project memories, want the %d outside %s", len(listed), want, rel)
			}
			for _, m := range listed {
				if slices.Contains(inShard, m.ID) {
					t.Fatalf("%s, from the damaged shard, was indexed", m.ID)
				}
			}
			if !slices.ContainsFunc(warnings, func(m string) bool { return strings.Contains(m, format.Dir+"/"+rel) }) {
				t.Errorf("no warning names %s: %q", rel, warnings)
			}
			report, err := Check(w.Repo.Root)
			if err != nil {
				t.Fatal(err)
			}
			if report.OK || !slices.ContainsFunc(report.Problems, func(p Problem) bool { return p.File == format.Dir+"/"+rel }) {
				t.Errorf("check does not name %s: %+v", rel, report.Problems)
			}
			_, err = fresh.Add(t.Context(), memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "A write while a shard is damaged."})
			if err == nil || !strings.Contains(err.Error(), rel) {
				t.Errorf("a write with %s damaged: %v, want a refusal naming it", rel, err)
			}
			if got, _ := os.ReadFile(path); string(got) != string(damage.bytes(good)) {
				t.Error("the refused write changed the damaged shard")
			}

			if err := os.WriteFile(path, good, 0o644); err != nil {
				t.Fatal(err)
			}
			warnings = nil
			listed, err = fresh.List(t.Context(), memory.Filter{Scope: memory.ScopeProject})
			if err != nil || len(listed) != len(mems) {
				t.Fatalf("after the shard was restored: %d memories (%v), want %d", len(listed), err, len(mems))
			}
			if len(warnings) > 0 {
				t.Errorf("warnings after the repair: %q", warnings)
			}
		})
	}
}

// A shard whose memories all went is deleted, never left empty, so an
// empty shard is always damage (emptiedShard).
func TestNoWriteLeavesAShardEmpty(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	w, mems := splitWorkspace(t, format.SplitAt+50)
	rel := format.ShardFile(format.ShardOf(mems[0].ID))
	var ids []string
	for _, m := range mems {
		if format.ShardFile(format.ShardOf(m.ID)) == rel {
			ids = append(ids, m.ID)
		}
	}
	if _, err := w.Remove(t.Context(), ids...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(w.Repo.Root, format.Dir, rel))
	if err == nil && len(data) == 0 {
		t.Fatalf("forgetting every memory of %s left it empty", rel)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}
