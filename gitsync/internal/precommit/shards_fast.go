package precommit

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/memory"
)

// A commit of a split project changes a few shards, so the pre-commit hook
// works from what it checked before, as it does for the one file
// (precommit.go): each run records, by git's object id, the staged files it
// verified (canonical, every line a valid memory of its shard, no secret,
// no line the staged tombstones cover) and the ids of the derived memories
// each holds. The next commit reads only the staged files it has not
// verified, the shards holding a derived memory, the shards of the
// memories this commit derives, and those of tombstones new since; the
// other shards are neither read nor decoded. Anything it cannot vouch for
// takes shards.preCommit's full path.

// maxShardsRead is the most staged shards the fast path reads; past it the
// full path, which reads them all in one pass, is as cheap.
const maxShardsRead = 64

// verifiedShards is what the last pre-commit hook of a split project knew
// of the files it left staged.
type verifiedShards struct {
	// Forgotten is the blob id of the staged forgotten.jsonl the files were
	// checked against; empty when none was staged.
	Forgotten string `json:"forgotten,omitempty"`
	// Files maps the blob id of each verified file (the inbox as its
	// header alone, or a shard) to the ids of the derived memories it holds.
	Files map[string][]string `json:"files"`
	Build string              `json:"build"`
}

func (s StagedShards) VerifiedShardsPath(w *project.Workspace) string {
	return filepath.Join(project.CacheDir(w.Repo), "verified-shards.json")
}

func (s StagedShards) LoadVerifiedShards(w *project.Workspace) (verifiedShards, bool) {
	var v verifiedShards
	ok := readRecord(s.VerifiedShardsPath(w), &v) && v.Files != nil
	return v, ok && thisBuild(v.Build)
}

// saveVerifiedShards records v, best effort: without it the next commit
// takes the full path.
func (s StagedShards) saveVerifiedShards(w *project.Workspace, v verifiedShards) {
	if v.Build = BuildKey(); v.Build != "" {
		writeRecord(s.VerifiedShardsPath(w), v)
	}
}

// stagedShardFiles are the memories files the index stages, by path under
// .acolyte/, with their blob ids: the inbox and each shard.
func stagedShardFiles(ix *git.Index) map[string]string {
	out := make(map[string]string)
	for rel, e := range ix.Entries {
		name, ok := strings.CutPrefix(rel, format.Dir+"/")
		if !ok {
			continue
		}
		if name == format.MemoriesFile {
			out[name] = e.Blob
		} else if shard, ok := strings.CutPrefix(name, format.ShardsDir+"/"); ok && !strings.Contains(shard, "/") {
			if _, ok := format.ParseShardFile(shard); ok {
				out[name] = e.Blob
			}
		}
	}
	return out
}

// stagedShard is one staged memories file the fast path read.
type stagedShard struct {
	rel, blob string
	mems      []memory.Memory
}

// PreCommitShards is the fast path of shards.preCommit. ok is false when it
// did nothing and the full path must run.
func (s StagedShards) PreCommitShards(ctx context.Context, w *project.Workspace, ix *git.Index, d derive.Derivation, res Result) (Result, bool, error) {
	v, ok := s.LoadVerifiedShards(w)
	if !ok {
		return res, false, nil
	}
	if pending, err := w.PendingHandEdits(ctx); err != nil || len(pending) > 0 {
		return res, false, err
	}
	staged := stagedShardFiles(ix)
	forgottenBlob := ix.Entries[acolytedir.ForgottenRel].Blob
	ts, newlyForgotten, ok := s.stagedTombstones(w, ix, v.Forgotten, forgottenBlob)
	if !ok {
		return res, false, nil
	}
	// The files to read: those not verified, those holding a derived
	// memory, and the shards this commit's derived memories and new
	// tombstones fall in.
	read := make(map[string]bool)
	for rel, blob := range staged {
		if ids, ok := v.Files[blob]; !ok || len(ids) > 0 {
			read[rel] = true
		}
	}
	for _, m := range d.Memories {
		read[format.ShardFile(format.ShardOf(m.ID))] = true
	}
	for _, id := range newlyForgotten {
		read[format.ShardFile(format.ShardOf(id))] = true
	}
	if len(read) > maxShardsRead {
		return res, false, nil
	}
	files, fresh, ok, err := readStagedShards(ix, staged, read, v)
	if err != nil || !ok {
		return res, err != nil, err
	}
	var current []memory.Memory
	for _, f := range files {
		current = append(current, f.mems...)
	}
	current, _ = format.Forget(current, ts.List)
	edits, err := s.freshHandEdits(ctx, w, current, fresh)
	if err != nil {
		return res, true, err
	}
	now := w.Clock()
	current = project.StampHandEdits(current, edits, now)
	next := derive.Refresh(current, d.Memories)
	byShard := format.Shard(next)
	encoded := make(map[string][]byte)
	for _, f := range files {
		if f.rel == format.MemoriesFile {
			continue
		}
		shard, _ := format.ParseShardFile(f.rel)
		if group := byShard[shard]; len(group) > 0 {
			encoded[f.rel] = format.Encode(group)
		} else {
			encoded[f.rel] = nil
		}
	}
	if res.Refused = secretRefusals(encoded, next); len(res.Refused) > 0 {
		return res, true, ErrRefused
	}
	changed := false
	blobs := maps.Clone(staged)
	for rel, data := range encoded {
		old := staged[rel]
		switch {
		case data == nil && old != "":
			if _, err := w.Repo.GitOutput(ctx, nil, "update-index", "--force-remove", "--", format.Dir+"/"+rel); err != nil {
				return res, true, err
			}
			delete(blobs, rel)
			changed = true
		case data != nil && (old == "" || !sameBlob(old, data)):
			blob, err := stageFile(ctx, w, format.Dir+"/"+rel, data)
			if err != nil {
				return res, true, err
			}
			blobs[rel] = blob
			changed = true
		}
	}
	if changed {
		res.Changes, res.Staged = project.Diff(current, next), true
		if err := project.EnsureAttributes(w.Repo.Root); err != nil {
			return res, true, err
		}
		if err := stageHelpers(ctx, w, ix); err != nil {
			return res, true, err
		}
	}
	s.saveVerifiedShards(w, verifiedAfter(v, blobs, files, byShard, forgottenBlob))
	synced, err := s.SyncAfterCommit(ctx, w, edits, now)
	res.Import = synced.Import
	res.Warnings = append(res.Warnings, synced.Refused...)
	return res, true, err
}

// stagedTombstones reads the staged forgotten.jsonl (blob, empty when none
// is staged) and the ids it covers that the one verified files were
// checked against (verifiedBlob) did not. ok is false when either cannot
// be read whole.
func (s StagedShards) stagedTombstones(w *project.Workspace, ix *git.Index, verifiedBlob, blob string) (ts acolytedir.Tombstones, newly []string, ok bool) {
	read := func(blob string) (acolytedir.Tombstones, bool) {
		if blob == "" {
			return acolytedir.Tombstones{}, true
		}
		data, err := ix.Cat(blob)
		if err != nil {
			return acolytedir.Tombstones{}, false
		}
		t, err := acolytedir.DecodeTombstones(data)
		return t, err == nil && len(t.Warnings) == 0
	}
	if ts, ok = read(blob); !ok || blob == verifiedBlob {
		return ts, nil, ok
	}
	before, ok := read(verifiedBlob)
	if !ok {
		return ts, nil, false
	}
	had := make(map[string]bool, len(before.List))
	for _, t := range before.List {
		had[t.ID] = true
	}
	for _, t := range ts.List {
		if !had[t.ID] {
			newly = append(newly, t.ID)
		}
	}
	return ts, newly, true
}

// freshHandEdits finds the hand edits among the memories of current whose
// ids fresh names, those of staged files no hook verified: each is compared
// with the index's row, as HandEditsToStamp compares a whole file.
func (s StagedShards) freshHandEdits(ctx context.Context, w *project.Workspace, current []memory.Memory, fresh map[string]bool) (map[string]time.Time, error) {
	var file, indexed []memory.Memory
	for _, m := range current {
		if !fresh[m.ID] {
			continue
		}
		row, err := w.Store.Get(ctx, w.Vis, m.ID)
		if err != nil {
			continue // not in the index: nothing to tell it apart from
		}
		file, indexed = append(file, m), append(indexed, row)
	}
	return project.HandEdits(file, indexed), nil
}

// secretRefusals refuses each memory of mems that holds a secret, by the
// file of encoded it is in and its line there.
func secretRefusals(encoded map[string][]byte, mems []memory.Memory) []derive.Refusal {
	var p acolytedir.SplitProject
	for rel, data := range encoded {
		p.Files = append(p.Files, acolytedir.ProjectFile{Rel: rel, Data: data})
	}
	locate := p.Locator()
	var out []derive.Refusal
	for _, m := range mems {
		rel, line := locate(m.ID)
		if f, found := derive.SecretRefusal(rel, line, m); found {
			sec, _ := format.FindSecret(m)
			f.Line = line
			f.Message = fmt.Sprintf("%s %s; delete that line, rotate the credential and git add %s", sec.Name(m, fmt.Sprintf("on line %d", line)), sec.Phrase(), rel)
			out = append(out, f)
		}
	}
	return out
}

// sameBlob reports whether data is the blob git stores as id.
func sameBlob(id string, data []byte) bool {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)) == id
}

// verifiedAfter is what the hook knows of the files it leaves staged,
// blobs by path: a file it read holds the derived memories of its shard in
// next (byShard); one it did not was verified before, with none.
func verifiedAfter(v verifiedShards, blobs map[string]string, read []stagedShard, byShard map[string][]memory.Memory, forgotten string) verifiedShards {
	out := verifiedShards{Forgotten: forgotten, Files: make(map[string][]string, len(blobs))}
	wasRead := make(map[string]bool, len(read))
	for _, f := range read {
		wasRead[f.rel] = true
	}
	for rel, blob := range blobs {
		if !wasRead[rel] {
			out.Files[blob] = v.Files[blob]
			continue
		}
		ids := []string{}
		if shard, ok := format.ParseShardFile(rel); ok {
			ids = derivedIDs(byShard[shard])
		}
		out.Files[blob] = ids
	}
	return out
}

// readStagedShards reads and decodes the staged files read names (paths
// under .acolyte/; staged gives their blobs, none for a shard this commit
// creates), and the ids of the memories in those v does not vouch for.
// ok is false, for the full path, when one is not what a verified file is:
// canonical, every line a valid memory of its shard, and the inbox no more
// than its header.
func readStagedShards(ix *git.Index, staged map[string]string, read map[string]bool, v verifiedShards) (files []stagedShard, fresh map[string]bool, ok bool, err error) {
	fresh = map[string]bool{}
	for rel := range read {
		f := stagedShard{rel: rel, blob: staged[rel]}
		if f.blob != "" {
			data, err := ix.Cat(f.blob)
			if err != nil {
				return nil, nil, false, err
			}
			dec, err := format.DecodeAll(format.Dir+"/"+rel, data)
			if err != nil || len(dec.Invalid)+len(dec.Duplicates) > 0 || !format.IsCanonical(data, dec.Memories) {
				return nil, nil, false, nil
			}
			if shard, isShard := format.ParseShardFile(rel); isShard && len(format.MisplacedIn(shard, dec.Memories)) > 0 ||
				rel == format.MemoriesFile && len(dec.Memories) > 0 {
				return nil, nil, false, nil
			}
			f.mems = dec.Memories
			if _, verified := v.Files[f.blob]; !verified {
				for _, m := range f.mems {
					fresh[m.ID] = true
				}
			}
		}
		files = append(files, f)
	}
	return files, fresh, true, nil
}
