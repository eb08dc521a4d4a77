package project

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/memory"
)

// A shard that cannot be decoded as a whole (conflict markers, a byte
// order mark, a missing header, garbage, emptied) is left out of every
// import (DecodeReadable), and writes refuse the project. Sync repairs it
// from what acolyte still knows of it: the lines of the damaged file that
// still decode, the shard's shadow (the last good import of it, which an
// import of the damaged file does not overwrite) and the shard as HEAD
// holds it, merged by id with the newest updated_at winning, less what
// forgotten.jsonl tombstones. The damaged file is kept under the git
// directory's cache first, so nothing the user had is lost.

// ShardRepair is what sync did about one shard that could not be decoded.
type ShardRepair struct {
	// File is the shard, relative to the repository.
	File string `json:"file"`
	// Repaired says the shard was rewritten from Recovered memories.
	Repaired bool `json:"repaired"`
	// Recovered counts the memories the repaired shard holds.
	Recovered int `json:"recovered"`
	// From counts the memories each source gave, the newest of each id
	// winning: "file" (the damaged file's readable lines), "shadow" (the
	// shard as last imported) and "head" (the shard at HEAD).
	From map[string]int `json:"from,omitempty"`
	// Kept is where the damaged original was copied before the rewrite.
	Kept string `json:"kept,omitempty"`
	// Lost are the lines of the damaged file that did not decode and
	// whose memory no other source had, by line number.
	Lost []string `json:"lost,omitempty"`
	// Fix is what to do when the shard could not be repaired.
	Fix string `json:"fix,omitempty"`
}

// String is the repair as sync prints it.
func (r ShardRepair) String() string {
	var b strings.Builder
	if !r.Repaired {
		fmt.Fprintf(&b, "%s could not be recovered: no memory of it decodes in the file, its shadow or HEAD; it is left as it is; restore it: %s", r.File, r.Fix)
		return b.String()
	}
	var from []string
	for _, src := range repairSources {
		if n := r.From[src]; n > 0 {
			from = append(from, fmt.Sprintf("%d from %s", n, repairSourceNames[src]))
		}
	}
	if len(from) == 0 {
		from = append(from, "every memory found in it is forgotten, so it is removed")
	}
	fmt.Fprintf(&b, "repaired %s: %d memories recovered (%s); the damaged file is kept at %s", r.File, r.Recovered, strings.Join(from, ", "), r.Kept)
	for _, l := range r.Lost {
		fmt.Fprintf(&b, "\n  not recovered: %s", l)
	}
	return b.String()
}

// repairSources names the sources a shard is repaired from, in the order
// they are read; an equal updated_at keeps the earlier one's memory.
var repairSources = []string{"file", "shadow", "head"}

// repairSourceNames are the sources as sync's report names them.
var repairSourceNames = map[string]string{"file": "the damaged file", "shadow": "its last import", "head": "HEAD"}

// ErrShardUnrecoverable is sync's error when a damaged shard had no
// source to repair it from.
var ErrShardUnrecoverable = errors.New("a damaged shard could not be recovered")

// RepairShards repairs each shard of a split project that cannot be
// decoded, under the lock the caller holds, and reports what it did. A
// shard of a newer format is not damaged and is left alone.
func (s Shards) RepairShards(ctx context.Context, w *Workspace) ([]ShardRepair, error) {
	root := w.Repo.Root
	if split, err := acolytedir.IsSplit(root); err != nil || !split {
		return nil, err
	}
	p, err := acolytedir.ReadSplit(root)
	if err != nil {
		return nil, err
	}
	var out []ShardRepair
	for _, f := range p.Files {
		shard, ok := format.ParseShardFile(f.Rel)
		if !ok || f.Rel == format.MemoriesFile || f.Data == nil {
			continue
		}
		// Only the whole-file checks, no memory decoded: the sync that
		// follows decodes every shard.
		if err := format.CheckWhole(format.Dir+"/"+f.Rel, f.Data); len(f.Data) > 0 && (err == nil || errors.Is(err, format.ErrVersionTooNew)) {
			continue
		}
		r, err := s.repairShard(ctx, w, p, f, shard)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// repairShard rebuilds the damaged shard f of p.
func (s Shards) repairShard(ctx context.Context, w *Workspace, p acolytedir.SplitProject, f acolytedir.ProjectFile, shard string) (ShardRepair, error) {
	path := format.Dir + "/" + f.Rel
	rep := ShardRepair{File: path}
	fromFile, unread := acolytedir.SalvageLines(f.Data)
	var shadow, head []memory.Memory
	if data, err := os.ReadFile(filepath.Join(s.ShardShadowDir(w), shard+".jsonl")); err == nil && len(data) > 0 {
		if d, err := format.DecodeAll(path, data); err == nil {
			shadow = d.Memories
		}
	}
	head = shardAtHead(ctx, w.Repo, path)
	best := make(map[string]memory.Memory)
	src := make(map[string]string)
	for i, mems := range [][]memory.Memory{fromFile, shadow, head} {
		for _, m := range mems {
			if have, ok := best[m.ID]; ok && !m.UpdatedAt.After(have.UpdatedAt) {
				continue
			}
			best[m.ID], src[m.ID] = m, repairSources[i]
		}
	}
	for _, l := range unread {
		if l.Id == "" || best[l.Id].ID == "" {
			rep.Lost = append(rep.Lost, fmt.Sprintf("line %d of %s: %s", l.N, path, l.Why))
		}
	}
	if len(best) == 0 {
		rep.Fix = "git checkout -- " + path
		return rep, nil
	}
	mems := make([]memory.Memory, 0, len(best))
	for _, m := range best {
		mems = append(mems, m)
	}
	slices.SortFunc(mems, func(a, b memory.Memory) int { return strings.Compare(a.ID, b.ID) })
	mems, _ = format.Forget(mems, p.Tombs.List)
	rep.From = make(map[string]int)
	for _, m := range mems {
		rep.From[src[m.ID]]++
	}
	kept, err := keepDamaged(w, shard, f.Data)
	if err != nil {
		return rep, err
	}
	rep.Kept = kept
	// Written as every write writes a shard, and only this shard: the
	// inbox's bytes are p's, which WriteSplit leaves alone. A memory of
	// another shard, from a line of the damaged file, goes where the
	// full write that follows in sync puts it.
	if err := format.CheckMemories(mems, acolytedir.ShardsRel); err != nil {
		return rep, err
	}
	next := []acolytedir.ProjectFile{p.Files[0], {Rel: f.Rel}}
	if len(mems) > 0 {
		next[1].Data = format.Encode(mems)
	}
	if err := acolytedir.WriteSplit(w.Repo.Root, p, next); err != nil {
		return rep, err
	}
	rep.Repaired, rep.Recovered = true, len(mems)
	return rep, nil
}

// shardAtHead is the memories of the shard at path as HEAD holds it, none
// when HEAD has no such file, it is larger than a shard may be, or it
// does not decode either.
func shardAtHead(ctx context.Context, r *git.Repo, path string) []memory.Memory {
	size, err := r.GitOutput(ctx, nil, "cat-file", "-s", "HEAD:"+path)
	if n, convErr := strconv.ParseInt(strings.TrimSpace(string(size)), 10, 64); err != nil || convErr != nil || n == 0 || n > format.MaxShardBytes {
		return nil
	}
	data, err := r.GitOutput(ctx, nil, "cat-file", "blob", "HEAD:"+path)
	if err != nil {
		return nil
	}
	d, err := format.DecodeAll(path, data)
	if err != nil {
		return nil
	}
	return d.Memories
}

// keepDamaged copies a damaged shard's bytes under the git directory's
// cache, never over an earlier copy, and returns where.
func keepDamaged(w *Workspace, shard string, data []byte) (string, error) {
	dir := filepath.Join(CacheDir(w.Repo), "damaged")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("keeping the damaged shard %s: %w", shard, err)
	}
	for n := 1; ; n++ {
		name := shard + ".jsonl"
		if n > 1 {
			name = fmt.Sprintf("%s.%d.jsonl", shard, n)
		}
		path := filepath.Join(dir, name)
		if old, err := os.ReadFile(path); err == nil {
			if bytes.Equal(old, data) {
				return path, nil
			}
			continue
		}
		if err := acolytedir.WriteAtomic(path, data); err != nil {
			return "", fmt.Errorf("keeping the damaged shard %s: %w", shard, err)
		}
		return path, nil
	}
}
