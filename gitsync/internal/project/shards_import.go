package project

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/memory"
)

// A checkout that changes one memory of a split project changes one shard,
// so its import reads that shard and what the index held of it: the
// shard's shadow, a copy kept under <gitdir>/acolyte/imported/ whenever a
// shard is imported or written, trusted only while its hash is the one the
// import state records for the shard. The memories that differ between the
// two are put and deleted; the other shards are not read. A change to the
// inbox or to forgotten.jsonl, a shard without a trusted shadow, or a line
// the decoder works around sends the import to the full path.

// ShardShadowDir is where a split project's shard shadows live.
func (s Shards) ShardShadowDir(w *Workspace) string {
	return filepath.Join(CacheDir(w.Repo), "imported")
}

// keepShardShadows copies files, the project's files as the index now
// holds them, to their shadows; a shard that is gone loses its shadow.
// Best effort: a cache, checked before use.
func (s Shards) keepShardShadows(w *Workspace, files []acolytedir.ProjectFile) {
	dir := s.ShardShadowDir(w)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	for _, f := range files {
		shard, ok := format.ParseShardFile(f.Rel)
		if !ok {
			continue
		}
		path := filepath.Join(dir, shard+".jsonl")
		if f.Data == nil {
			os.Remove(path)
			continue
		}
		// Written in place, not renamed into place: a torn shadow fails
		// its hash and costs one whole import, and a write here is on
		// every add's path.
		if os.WriteFile(path, f.Data, 0o644) != nil {
			os.Remove(path)
		}
	}
}

// shardShadow is the shadow of the shard file rel when its hash is hash.
func (s Shards) shardShadow(w *Workspace, rel, hash string) ([]byte, bool) {
	shard, ok := format.ParseShardFile(rel)
	if !ok {
		return nil, false
	}
	data, err := os.ReadFile(filepath.Join(s.ShardShadowDir(w), shard+".jsonl"))
	if err != nil || acolytedir.Sha256Hex(data) != hash {
		return nil, false
	}
	return data, true
}

// ImportShards imports the shards that changed since the import state
// last, whose file table is files, and reports ok false, having changed
// nothing, when the full import must run instead. The caller holds the
// lock.
func (s Shards) ImportShards(ctx context.Context, w *Workspace, last string, files map[string]acolytedir.FileRecord) (out Imported, ok bool, err error) {
	if _, _, warnings := acolytedir.ParseImportState(last); len(warnings) > 0 {
		return out, false, nil
	}
	next, changed, ok := s.changedShards(w, files)
	if !ok {
		return out, false, nil
	}
	ts, err := acolytedir.ReadTombstones(w.Repo.Root)
	if err != nil || len(ts.Warnings) > 0 {
		return out, false, nil
	}
	var before, after []memory.Memory
	for _, f := range changed {
		shard, _ := format.ParseShardFile(f.Rel)
		var old []byte
		if r, had := files[f.Rel]; had {
			if old, ok = s.shardShadow(w, f.Rel, r.Hash); !ok {
				return out, false, nil
			}
		}
		was, okOld := acolytedir.CleanShard(f.Rel, shard, old)
		now, okNew := acolytedir.CleanShard(f.Rel, shard, f.Data)
		if !okOld || !okNew {
			return out, false, nil
		}
		before, after = append(before, was...), append(after, now...)
	}
	before, _ = format.Forget(before, ts.List)
	after, _ = format.Forget(after, ts.List)
	if len(changed) > 0 {
		pending, err := w.PendingHandEdits(ctx)
		if err != nil {
			return out, true, err
		}
		full := false
		out.ReplaceStats, err = w.IndexDiff(ctx, before, after, func() (memory.ReplaceStats, error) {
			full = true // too many changes: the caller imports whole
			return memory.ReplaceStats{}, nil
		})
		if err != nil || full {
			return out, !full, err
		}
		var removed []string
		kept := make(map[string]bool, len(after))
		for _, m := range after {
			kept[m.ID] = true
		}
		for _, m := range before {
			if !kept[m.ID] {
				removed = append(removed, m.ID)
			}
		}
		if err := w.recordHandEditsDiff(ctx, pending, after, removed, out.Revised); err != nil {
			return out, true, err
		}
		s.keepShardShadows(w, changed)
	} else {
		out.Skipped = true
	}
	return out, true, w.Store.SetState(ctx, w.StateKey(), acolytedir.WithFiles(acolytedir.ImportState(acolytedir.TableHash(next), "", nil), next))
}

// changedShards compares the project's files with files, the import
// state's table: it returns the table they make now and the shards whose
// content changed (data nil for one removed). ok is false when the full
// import must run: the inbox or forgotten.jsonl changed (either may hide
// or hold any shard's memories), or a file cannot be read.
func (s Shards) changedShards(w *Workspace, files map[string]acolytedir.FileRecord) (next map[string]acolytedir.FileRecord, changed []acolytedir.ProjectFile, ok bool) {
	rels, err := acolytedir.ProjectFiles(w.Repo.Root)
	if err != nil {
		return nil, nil, false
	}
	r, err := acolytedir.OpenGuarded(w.Repo.Root)
	if err != nil {
		return nil, nil, false
	}
	defer r.Close()
	next = make(map[string]acolytedir.FileRecord, len(files))
	present := make(map[string]bool, len(rels))
	for _, rel := range rels {
		path := filepath.Join(w.Repo.Root, format.Dir, filepath.FromSlash(rel))
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, false
		}
		present[rel] = true
		rec, recorded := files[rel]
		if recorded && rec.Stamp != "" && rec.Stamp == git.Stamp(fi) {
			next[rel] = rec
			continue
		}
		data, err := acolytedir.ReadAcolyteFileIn(r, rel)
		if err != nil {
			return nil, nil, false
		}
		hash := acolytedir.Sha256Hex(data)
		next[rel] = acolytedir.FileRecord{Stamp: acolytedir.SettledStamp(path, fi, nil, acolytedir.ShardSettle(fi, w.Settle)), Hash: hash}
		if recorded && rec.Hash == hash {
			continue
		}
		if rel == format.MemoriesFile || rel == format.ForgottenFile {
			return nil, nil, false // either may hide or hold any shard's memories
		}
		changed = append(changed, acolytedir.ProjectFile{Rel: rel, Data: data})
	}
	for rel := range files {
		if !present[rel] && rel != acolytedir.ShardsDirKey {
			if _, isShard := format.ParseShardFile(rel); !isShard {
				return nil, nil, false
			}
			changed = append(changed, acolytedir.ProjectFile{Rel: rel}) // removed
		}
	}
	return next, changed, true
}
