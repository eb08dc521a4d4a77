package gitsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/memory"
)

// A write to a split project costs its shards: while the import state's
// file table still describes every file (filesHold, a stat each), the
// index holds the project exactly, so a write reads, edits and rewrites
// only the shards of the memories it touches, and records their new
// hashes. Anything else (a file changed behind acolyte's back, an import
// that worked around a bad line) returns format.ErrNotPatchable, and the
// caller takes the full path, which reads every file and is always
// correct.

// tableHash is the content hash splitProject.hash gives for the files a
// table records.
func tableHash(files map[string]fileRecord) string {
	names := make([]string, 0, len(files))
	for rel := range files {
		if rel != format.ForgottenFile {
			names = append(names, rel)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		// The inbox first, then the shards by name, as readSplit lists them.
		if (a == format.MemoriesFile) != (b == format.MemoriesFile) {
			if a == format.MemoriesFile {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	for _, rel := range names {
		b.WriteString(rel + " " + files[rel].hash + "\n")
	}
	h := "split-" + sha256Hex([]byte(b.String()))
	if f, ok := files[format.ForgottenFile]; ok && f.hash != emptyHash {
		h += "+" + f.hash
	}
	return h
}

// emptyInboxHash is the SHA-256 of a split project's inbox as acolyte
// leaves it: the header alone.
var emptyInboxHash = sha256Hex(format.Encode(nil))

// emptyHash is the SHA-256 of no bytes: an empty forgotten.jsonl adds
// nothing to the hash, as withForgotten has it.
var emptyHash = sha256Hex(nil)

// shardEdit changes the memories of one shard; it returns them unchanged
// when it has nothing to do there.
type shardEdit func(mems []memory.Memory) ([]memory.Memory, error)

// patchSplit runs edits, by shard, on a split project whose import state
// vouches for every file, then has index bring the index along and records
// the new files. before runs under the lock ahead of any write (a forget
// writes its tombstones there); it may return format.ErrNotPatchable.
func (w *Workspace) patchSplit(ctx context.Context, edits map[string]shardEdit, before func() error, index func() error) error {
	dir := filepath.Join(w.Repo.Root, format.Dir)
	if split, err := isSplit(w.Repo.Root); err != nil || !split {
		return format.ErrNotPatchable
	}
	unlock, err := LockDir(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	state, err := w.store.GetState(ctx, w.stateKey())
	if err != nil {
		return err
	}
	files, ok := stateFiles(state)
	// An inbox holding lines (an older acolyte's writes) is for the full
	// path to move to the shards.
	if _, _, warnings := parseImportState(state); !ok || len(warnings) > 0 || files[format.MemoriesFile].hash != emptyInboxHash {
		return format.ErrNotPatchable
	}
	// The files that settled since are stamped in the state this write
	// records, so a run of writes re-hashes only the last few.
	if holds, _ := checkFiles(w.Repo.Root, files, w.settle); !holds {
		return format.ErrNotPatchable
	}
	type written struct {
		rel       string
		old, data []byte
	}
	var out []written
	for shard, edit := range edits {
		rel := format.ShardFile(shard)
		data, err := readAcolyteFile(w.Repo.Root, rel)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		d, err := format.DecodeAll(format.Dir+"/"+rel, data)
		if err != nil || len(d.Invalid)+len(d.Duplicates) > 0 || len(format.MisplacedIn(shard, d.Memories)) > 0 {
			return format.ErrNotPatchable
		}
		next, err := edit(d.Memories)
		if err != nil {
			return err
		}
		if err := checkMemories(next, format.Dir+"/"+rel); err != nil {
			return err
		}
		var enc []byte
		if len(next) > 0 {
			enc = format.Encode(next)
		}
		if string(enc) != string(data) {
			out = append(out, written{rel, data, enc})
		}
	}
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	for _, f := range out {
		path := filepath.Join(dir, filepath.FromSlash(f.rel))
		if f.data == nil {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing the empty shard %s/%s: %w", format.Dir, f.rel, err)
			}
			delete(files, f.rel)
			continue
		}
		if err := writeShard(w.Repo.Root, f.rel, f.old, f.data); err != nil {
			return err
		}
		files[f.rel] = fileRecord{hash: sha256Hex(f.data)} // its stamp is not settled yet
	}
	if indexed, err := w.indexWritten(ctx, shardsRel, index); !indexed {
		return err
	}
	shadows := make([]projectFile, len(out))
	for i, f := range out {
		shadows[i] = projectFile{rel: f.rel, data: f.data}
	}
	w.keepShardShadows(shadows)
	if before != nil {
		ts, err := readForgotten(w.Repo.Root)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err == nil {
			files[format.ForgottenFile] = fileRecord{hash: sha256Hex(ts)}
		}
	}
	return w.store.SetState(ctx, w.stateKey(), withFiles(importState(tableHash(files), "", nil), files))
}

// addSplit stores a prepared project memory in a split project's shard,
// deduplicating against the index, which patchSplit guarantees holds the
// project.
func (w *Workspace) addSplit(ctx context.Context, m memory.Memory) (memory.Added, error) {
	var out memory.Added
	var dup bool
	edit := func(mems []memory.Memory) ([]memory.Memory, error) {
		have, found, err := w.store.FindContent(ctx, memory.ScopeProject, w.Repo.Root, m.Content)
		if err != nil {
			return nil, err
		}
		if found {
			out, dup = memory.Added{Memory: have, Existing: true}, true
			return mems, nil
		}
		out = memory.Added{Memory: m}
		return append(mems, m), nil
	}
	err := w.patchSplit(ctx, map[string]shardEdit{format.ShardOf(m.ID): edit}, nil, func() error {
		if dup {
			return nil
		}
		put, err := w.store.Put(ctx, m)
		out.Warning = put.Warning
		return err
	})
	return out, err
}

// removeSplit forgets project memories of a split project: their
// tombstones first, then their lines.
func (w *Workspace) removeSplit(ctx context.Context, mems []memory.Memory, now time.Time) error {
	gone := make(map[string]bool, len(mems))
	ids := make([]string, 0, len(mems))
	edits := make(map[string]shardEdit)
	for _, m := range mems {
		gone[m.ID] = true
		ids = append(ids, m.ID)
		edits[format.ShardOf(m.ID)] = func(in []memory.Memory) ([]memory.Memory, error) {
			return slices.DeleteFunc(in, func(m memory.Memory) bool { return gone[m.ID] }), nil
		}
	}
	return w.patchSplit(ctx, edits, func() error { return w.addTombstones(mems, now) }, func() error {
		_, err := w.store.Delete(ctx, w.vis, ids...)
		return err
	})
}

// editSplitLine replaces the line of m in its shard of a split project.
func (w *Workspace) editSplitLine(ctx context.Context, m memory.Memory) error {
	edit := func(mems []memory.Memory) ([]memory.Memory, error) {
		i := slices.IndexFunc(mems, func(have memory.Memory) bool { return have.ID == m.ID })
		if i < 0 {
			return nil, format.ErrNotPatchable
		}
		mems[i] = m
		return mems, nil
	}
	return w.patchSplit(ctx, map[string]shardEdit{format.ShardOf(m.ID): edit}, nil, func() error {
		_, err := w.store.Put(ctx, m)
		return err
	})
}

// writeShard replaces the shard file rel, whose bytes were old, with data.
// A new memory's id is time-ordered, so it almost always sorts last in its
// shard and data is old with one more line: that line is appended in place
// and synced, as the one file's append is (appendPatched), which spares
// the temporary file, the rename and the directory's sync that a rewrite
// costs. Anything else is written whole, atomically.
func writeShard(root, rel string, old, data []byte) error {
	path := filepath.Join(root, format.Dir, filepath.FromSlash(rel))
	if len(old) == 0 || !bytes.HasPrefix(data, old) {
		atomicfile.RemoveStale(filepath.Dir(path), 0) // a killed writer's, under this lock
		return writeAtomic(path, data)
	}
	r, err := openGuarded(root)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := r.OpenFile(filepath.FromSlash(format.Dir+"/"+rel), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("writing %s/%s: %w", format.Dir, rel, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(old)) {
		return format.ErrNotPatchable // changed since it was read; the caller holds the lock, so not by acolyte
	}
	if err := appendSynced(f, int64(len(old)), data[len(old):]); err != nil {
		return fmt.Errorf("writing %s/%s: %w", format.Dir, rel, err)
	}
	return nil
}
