package precommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/memory"
)

// stagedSplit reports whether the index stages a split project: a file
// under .acolyte/memories/.
func stagedSplit(ix *git.Index) bool {
	for rel := range ix.Entries {
		if strings.HasPrefix(rel, acolytedir.ShardsRel+"/") {
			return true
		}
	}
	return false
}

// readStagedSplit reads the memories files the index stages: the inbox and
// every shard, as ReadSplit reads them from the worktree.
func readStagedSplit(ix *git.Index) (acolytedir.SplitProject, error) {
	var p acolytedir.SplitProject
	staged := stagedShardFiles(ix)
	rels := []string{format.MemoriesFile}
	for rel := range staged {
		if rel != format.MemoriesFile {
			rels = append(rels, rel)
		}
	}
	slices.Sort(rels[1:])
	for _, rel := range rels {
		var data []byte
		if blob := staged[rel]; blob != "" {
			var err error
			if data, err = ix.Cat(blob); err != nil {
				return p, err
			}
		}
		p.Files = append(p.Files, acolytedir.ProjectFile{Rel: rel, Data: data})
	}
	return p, nil
}

// preCommit is PreCommitFull for a project the index stages split, or
// that this commit's memories would take past format.SplitAt: every staged
// file is decoded, the derived memories refreshed, every memory scanned for
// secrets, and the files whose bytes change staged, the emptied shards
// removed from the index.
func (s StagedShards) preCommit(ctx context.Context, w *project.Workspace, ix *git.Index, d derive.Derivation, res Result) (Result, error) {
	if fast, ok, err := s.PreCommitShards(ctx, w, ix, d, res); ok || err != nil {
		return fast, err
	}
	p, err := readStagedSplit(ix)
	if err != nil {
		return res, err
	}
	ts, err := stagedTombstones(ix)
	if err != nil {
		return res, err
	}
	p.Tombs = ts
	decoded, parts, err := p.Decode()
	if err != nil {
		return res, fmt.Errorf("the staged %w; fix it, git add it, and commit again", err)
	}
	current, _ := format.Forget(decoded.Memories, ts.List)
	edits, err := w.HandEditsToStamp(ctx, current, p.Hash())
	if err != nil {
		return res, err
	}
	now := w.Clock()
	current = project.StampHandEdits(current, edits, now)
	next := derive.Refresh(current, d.Memories)
	files := acolytedir.EncodeSplit(next, parts)
	encoded := make(map[string][]byte, len(files))
	for _, f := range files {
		encoded[f.Rel] = f.Data
	}
	if res.Refused = secretRefusals(encoded, next); len(res.Refused) > 0 {
		return res, ErrRefused
	}
	staged := make(map[string][]byte, len(p.Files))
	for _, f := range p.Files {
		staged[f.Rel] = f.Data
	}
	changed := false
	v := verifiedShards{Forgotten: ix.Entries[acolytedir.ForgottenRel].Blob, Files: map[string][]string{}}
	byShard := format.Shard(next)
	for i, f := range files {
		entry, had := ix.Entries[format.Dir+"/"+f.Rel]
		blob := entry.Blob
		switch {
		case f.Data == nil && had:
			if _, err := w.Repo.GitOutput(ctx, nil, "update-index", "--force-remove", "--", format.Dir+"/"+f.Rel); err != nil {
				return res, err
			}
			changed = true
		case f.Data != nil && (!had || !bytes.Equal(staged[f.Rel], f.Data)):
			if blob, err = stageFile(ctx, w, format.Dir+"/"+f.Rel, f.Data); err != nil {
				return res, err
			}
			changed = true
		}
		// Verified for the next commit: a file left with no line the
		// decoder works around (EncodeSplit keeps invalid ones).
		if f.Data != nil && !keepsInvalid(parts, f.Rel) {
			shard, _ := format.ParseShardFile(f.Rel)
			v.Files[blob] = derivedIDs(byShard[shard])
			if i == 0 {
				v.Files[blob] = []string{} // the inbox, its header alone
			}
		}
	}
	s.saveVerifiedShards(w, v)
	if changed {
		res.Changes, res.Staged = project.Diff(current, next), true
		if err := project.EnsureAttributes(w.Repo.Root); err != nil {
			return res, err
		}
		if err := stageHelpers(ctx, w, ix); err != nil {
			return res, err
		}
	}
	// The worktree may hold more (unstaged edits); it follows its own files.
	synced, err := w.Sync(ctx, edits, now)
	res.Import = synced.Import
	res.Warnings = append(res.Warnings, synced.Refused...)
	return res, err
}

// keepsInvalid reports whether the file rel of parts held lines that are
// not valid memories, which a write keeps.
func keepsInvalid(parts []format.Part, rel string) bool {
	for _, p := range parts {
		if p.File == rel {
			return len(p.Decoded.InvalidLines) > 0
		}
	}
	return false
}

// splitsOnCommit reports whether the staged one file, decoded, would be
// split by this commit: it holds more than format.SplitAt memories.
func splitsOnCommit(mems []memory.Memory) bool { return len(mems) > format.SplitAt }

// stagedTombstones reads the forgotten.jsonl the index stages (none when it
// stages none), refusing one it cannot read whole, with the fix.
func stagedTombstones(ix *git.Index) (acolytedir.Tombstones, error) {
	var data []byte
	if e, ok := ix.Entries[acolytedir.ForgottenRel]; ok {
		var err error
		if data, err = ix.Cat(e.Blob); err != nil {
			return acolytedir.Tombstones{}, err
		}
	}
	ts, err := acolytedir.DecodeTombstones(data)
	if err == nil && len(ts.Warnings) > 0 {
		err = errors.New(ts.Warnings[0])
	}
	if err != nil {
		return acolytedir.Tombstones{}, fmt.Errorf("the staged %s: %w; fix it, git add it, and commit again", acolytedir.ForgottenRel, err)
	}
	return ts, nil
}
