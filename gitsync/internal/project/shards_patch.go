package project

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/memory"
)

// A write to a split project costs its shards: while the import state's
// file table still describes the shards it touches (a stat each), the
// index holds them exactly, so a write reads, edits and rewrites only
// those shards, and records their new hashes beside the other files'
// records, which it leaves as they were. Anything else (a file changed behind acolyte's back, an import
// that worked around a bad line) returns format.ErrNotPatchable, and the
// caller takes the full path, which reads every file and is always
// correct.

// appendEdit is the ShardEdit of adding m. It also marks the edit as an
// add, which patchSplit appends after the shard's last line without
// decoding the shard when m's id sorts last (newShard).
func appendEdit(m memory.Memory) acolytedir.ShardEdit {
	return func(mems []memory.Memory) ([]memory.Memory, error) { return append(mems, m), nil }
}

// patchSplit runs edits, by shard, on a split project whose import state
// vouches for every file, then has index bring the index along and records
// the new files. before runs under the lock ahead of any write (a forget
// writes its tombstones there); it may return format.ErrNotPatchable.
func (s Shards) patchSplit(ctx context.Context, w *Workspace, edits map[string]acolytedir.ShardEdit, before func() error, index func() error) error {
	return s.patchShards(ctx, w, edits, nil, before, index)
}

// patchShards is patchSplit where adds, by shard, are new memories each to
// go after its shard's last line: the line is appended to the shard's
// bytes without decoding them, and only when an id does not sort last is
// the shard decoded and edited (with appendEdit) instead.
func (s Shards) patchShards(ctx context.Context, w *Workspace, edits map[string]acolytedir.ShardEdit, adds map[string]memory.Memory, before func() error, index func() error) error {
	dir := filepath.Join(w.Repo.Root, format.Dir)
	if split, err := acolytedir.IsSplit(w.Repo.Root); err != nil || !split {
		return format.ErrNotPatchable
	}
	unlock, err := acolytedir.LockDir(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	state, err := w.Store.GetState(ctx, w.StateKey())
	if err != nil {
		return err
	}
	files, ok := acolytedir.StateFiles(state)
	// An inbox holding lines (an older acolyte's writes) is for the full
	// path to move to the shards.
	if _, _, warnings := acolytedir.ParseImportState(state); !ok || len(warnings) > 0 || files[format.MemoriesFile].Hash != acolytedir.EmptyInboxHash() {
		return format.ErrNotPatchable
	}
	// Only the shards this write touches must be what the index holds:
	// the state it records keeps every other file's record as it was, so
	// a file changed behind acolyte's back still fails the next check
	// and is imported then. Those that settled since are stamped.
	var touched []string
	for shard := range shardsOf(edits, adds) {
		touched = append(touched, format.ShardFile(shard))
	}
	if holds, _, _ := acolytedir.CheckRels(w.Repo.Root, files, touched, w.Settle); !holds {
		return format.ErrNotPatchable
	}
	type written struct {
		rel       string
		old, data []byte
	}
	var out []written
	for shard := range shardsOf(edits, adds) {
		rel := format.ShardFile(shard)
		data, err := acolytedir.ReadAcolyteFile(w.Repo.Root, rel)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if m, ok := adds[shard]; ok {
			if line, err := format.AppendLine(acolytedir.LastLine(data), m); err == nil {
				out = append(out, written{rel, data, append(slices.Clip(data), line...)})
				continue
			} else if !errors.Is(err, format.ErrNotPatchable) {
				return err
			}
		}
		edit := edits[shard]
		if m, ok := adds[shard]; ok {
			edit = appendEdit(m)
		}
		enc, err := acolytedir.EditShard(rel, shard, data, edit)
		if err != nil {
			return err
		}
		if string(enc) != string(data) {
			out = append(out, written{rel, data, enc})
		}
	}
	// before runs once every edit is known to apply: a forget's tombstones
	// are not written for a write that falls back to the full path.
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	for _, f := range out {
		if err := acolytedir.WriteShard(w.Repo.Root, f.rel, f.old, f.data); err != nil {
			return err
		}
		if f.data == nil {
			delete(files, f.rel)
		} else {
			files[f.rel] = acolytedir.FileRecord{Hash: acolytedir.Sha256Hex(f.data)} // its stamp is not settled yet
		}
	}
	if indexed, err := w.indexWritten(ctx, acolytedir.ShardsRel, index); !indexed {
		return err
	}
	shadows := make([]acolytedir.ProjectFile, len(out))
	for i, f := range out {
		shadows[i] = acolytedir.ProjectFile{Rel: f.rel, Data: f.data}
	}
	s.keepShardShadows(w, shadows)
	if before != nil {
		ts, err := acolytedir.ReadForgotten(w.Repo.Root)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err == nil {
			files[format.ForgottenFile] = acolytedir.FileRecord{Hash: acolytedir.Sha256Hex(ts)}
		}
	}
	return w.Store.SetState(ctx, w.StateKey(), acolytedir.WithFiles(acolytedir.ImportState(acolytedir.TableHash(files), "", nil), files))
}

// Add stores a prepared project memory in a split project's shard,
// deduplicating against the index, which patchSplit guarantees holds the
// project.
func (s Shards) Add(ctx context.Context, w *Workspace, m memory.Memory) (memory.Added, error) {
	out := memory.Added{Memory: m}
	dedupe := func() error {
		have, found, err := w.Store.FindContent(ctx, memory.ScopeProject, w.Repo.Root, m.Content)
		if err == nil && found {
			out = memory.Added{Memory: have, Existing: true}
			return errDuplicate
		}
		return err
	}
	err := s.patchShards(ctx, w, nil, map[string]memory.Memory{format.ShardOf(m.ID): m}, dedupe, func() error {
		put, err := w.Store.Put(ctx, m)
		out.Warning = put.Warning
		return err
	})
	if errors.Is(err, errDuplicate) {
		return out, nil
	}
	return out, err
}

// errDuplicate stops an add whose content the project already holds,
// before anything is written.
var errDuplicate = errors.New("the project already holds this memory")

// Remove forgets project memories of a split project: their
// tombstones first, then their lines.
func (s Shards) Remove(ctx context.Context, w *Workspace, mems []memory.Memory, now time.Time) error {
	gone := make(map[string]bool, len(mems))
	ids := make([]string, 0, len(mems))
	edits := make(map[string]acolytedir.ShardEdit)
	for _, m := range mems {
		gone[m.ID] = true
		ids = append(ids, m.ID)
		edits[format.ShardOf(m.ID)] = func(in []memory.Memory) ([]memory.Memory, error) {
			return slices.DeleteFunc(in, func(m memory.Memory) bool { return gone[m.ID] }), nil
		}
	}
	return s.patchSplit(ctx, w, edits, func() error { return w.AddTombstones(mems, now) }, func() error {
		_, err := w.Store.Delete(ctx, w.Vis, ids...)
		return err
	})
}

// Replace replaces the line of m in its shard of a split project.
func (s Shards) Replace(ctx context.Context, w *Workspace, m memory.Memory) error {
	edit := func(mems []memory.Memory) ([]memory.Memory, error) {
		i := slices.IndexFunc(mems, func(have memory.Memory) bool { return have.ID == m.ID })
		if i < 0 {
			return nil, format.ErrNotPatchable
		}
		mems[i] = m
		return mems, nil
	}
	return s.patchSplit(ctx, w, map[string]acolytedir.ShardEdit{format.ShardOf(m.ID): edit}, nil, func() error {
		_, err := w.Store.Put(ctx, m)
		return err
	})
}

// shardsOf is every shard edits or adds name.
func shardsOf(edits map[string]acolytedir.ShardEdit, adds map[string]memory.Memory) map[string]bool {
	out := make(map[string]bool, len(edits)+len(adds))
	for s := range edits {
		out[s] = true
	}
	for s := range adds {
		out[s] = true
	}
	return out
}
