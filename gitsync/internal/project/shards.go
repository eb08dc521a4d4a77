package project

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
	"sync"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/memory"
)

// The split layout (format.SplitAt) as the workspace reads and writes it.
// A split project is one whose .acolyte/memories/ directory exists; its
// memories are the inbox's and every shard's, read as one set
// (format.Join). A write puts each memory in its shard and empties the
// inbox after the shards are written, so a crash between the two leaves
// lines in both, which Join resolves and the next write finishes.
//
// The import state of a split project records each file's stamp and
// content hash (splitState): a command stats the files, re-hashes only
// those whose stamp moved (a shard is about 90 KB at 100k memories), and
// imports only when a content hash differs.

// ShardsMergeAttribute routes the shards to the acolyte merge driver, as
// MergeAttribute routes the one file: each shard merges by id as the file
// does.
const ShardsMergeAttribute = "/" + acolytedir.ShardsRel + "/*.jsonl merge=" + acolytedir.MergeDriverName

// ShardsUnionAttribute is the shards' line in .acolyte/.gitattributes, the
// union fallback of a clone without acolyte's driver.
const ShardsUnionAttribute = format.ShardsDir + "/*.jsonl merge=union"

// routeShards gives the shards the merge driver in a repository whose
// memories file has it, for a driver installed before the project split.
func routeShards(r *git.Repo) error {
	attrs, err := os.ReadFile(r.InfoAttributes())
	if err != nil || !slices.Contains(strings.Split(string(attrs), "\n"), acolytedir.MergeAttribute) {
		return nil
	}
	return acolytedir.EnsureLines(r.InfoAttributes(), ShardsMergeAttribute)
}

// rewrite is change for a split project: every file read and joined,
// edited as one set, and only the files whose bytes differ written.
func (s Shards) rewrite(ctx context.Context, w *Workspace, edit func([]memory.Memory) ([]memory.Memory, error)) (memory.ReplaceStats, error) {
	p, err := acolytedir.ReadSplit(w.Repo.Root)
	if err != nil {
		return memory.ReplaceStats{}, err
	}
	if len(p.Tombs.Warnings) > 0 {
		return memory.ReplaceStats{}, fmt.Errorf("%w: %s", format.ErrInvalidFile, p.Tombs.Warnings[0])
	}
	d, parts, err := p.Decode()
	if err != nil {
		return memory.ReplaceStats{}, err
	}
	w.Tell(d.Warnings())
	d.Memories, _ = format.Forget(d.Memories, p.Tombs.List)
	hash := p.Hash()
	last, err := w.Store.GetState(ctx, w.StateKey())
	if err != nil {
		return memory.ReplaceStats{}, err
	}
	lastHash, _, warnings := acolytedir.ParseImportState(last)
	exact := lastHash == hash && len(warnings) == 0 && len(d.InvalidLines) == 0 && len(d.Duplicates) == 0
	return s.editSplit(ctx, w, p, parts, d.Memories, hash, exact, edit)
}

// editSplit runs edit over mems, the project's memories as read into p and
// parts (hash is p's content hash; exact says the index holds exactly
// mems), writes the result split and brings the index to it. A project
// that is not yet split comes here from change once it would hold more
// than format.SplitAt memories, with p holding no file: every shard is
// written, then the inbox is left as its header.
func (s Shards) editSplit(ctx context.Context, w *Workspace, p acolytedir.SplitProject, parts []format.Part, mems []memory.Memory, hash string, exact bool,
	edit func([]memory.Memory) ([]memory.Memory, error)) (memory.ReplaceStats, error) {
	var stats memory.ReplaceStats
	pending, err := w.HandEditsToStamp(ctx, mems, hash)
	if err != nil {
		return stats, err
	}
	indexed := slices.Clone(mems)
	next, err := edit(mems)
	if err != nil {
		return stats, err
	}
	next = StampHandEdits(next, pending, time.Now())
	if err := s.writeSplitIndexed(ctx, w, p, parts, indexed, next, exact, &stats); err != nil {
		return stats, err
	}
	if len(pending) > 0 {
		return stats, w.SetPendingHandEdits(ctx, nil)
	}
	return stats, nil
}

// writeSplitIndexed writes next as a split project over p, brings the
// index from indexed to it, and records the files in the import state.
func (s Shards) writeSplitIndexed(ctx context.Context, w *Workspace, p acolytedir.SplitProject, parts []format.Part, indexed, next []memory.Memory, exact bool, stats *memory.ReplaceStats) error {
	if err := routeShards(w.Repo); err != nil {
		return err
	}
	files, err := writeSplitFiles(w.Repo.Root, p, parts, next)
	if err != nil {
		return err
	}
	defer s.keepShardShadows(w, files)
	done, err := w.indexWritten(ctx, acolytedir.ShardsRel, func() (err error) {
		*stats, err = w.indexChanges(ctx, exact, indexed, next)
		return err
	})
	if !done {
		return err
	}
	// edit may have added tombstones (a forget).
	ts, err := acolytedir.ReadTombstones(w.Repo.Root)
	if err != nil {
		return err
	}
	written := acolytedir.SplitProject{Files: files, Tombs: ts}
	var warnings []string
	for _, f := range files {
		if !slices.ContainsFunc(parts, func(pt format.Part) bool { return pt.File == f.Rel && len(pt.Decoded.InvalidLines) > 0 }) {
			continue
		}
		// Recorded like an import's warnings: every command goes on naming
		// the kept lines, at their new place.
		kept, _ := format.DecodeAll(format.Dir+"/"+f.Rel, f.Data)
		warnings = append(warnings, kept.Warnings()...)
	}
	return s.recordSplit(ctx, w, &written, warnings)
}

// recordSplit records p, as now on disk, in the import state: its content
// hash, the warnings its import gave, and each file's stamp and hash.
func (s Shards) recordSplit(ctx context.Context, w *Workspace, p *acolytedir.SplitProject, warnings []string) error {
	files, err := acolytedir.RecordFiles(w.Repo.Root, p.Sums(), w.Settle)
	if err != nil {
		return err
	}
	return w.Store.SetState(ctx, w.StateKey(), acolytedir.WithFiles(acolytedir.ImportState(p.Hash(), "", warnings), files))
}

// importSplit makes the index equal to a split project, under the lock.
// A project that cannot be read as a whole (conflict markers, a newer
// format) leaves the last import searchable and says why.
func (s Shards) importSplit(ctx context.Context, w *Workspace) (Imported, error) {
	var out Imported
	err := w.Locked(ctx, func() error {
		last, err := w.Store.GetState(ctx, w.StateKey())
		if err != nil {
			return err
		}
		if files, ok := acolytedir.StateFiles(last); ok {
			var done bool
			if out, done, err = s.ImportShards(ctx, w, last, files); done || err != nil {
				return err
			}
		}
		p, err := acolytedir.ReadSplit(w.Repo.Root)
		if err != nil {
			out = Imported{Skipped: true, Warnings: []string{fmt.Sprintf("project memories not re-imported, searching the last import: %v", err)}}
			return nil
		}
		hash := p.Hash()
		if lastHash, _, lastWarnings := acolytedir.ParseImportState(last); lastHash == hash {
			// Touched, not changed: only the stamps are new.
			out = Imported{Skipped: true, Warnings: lastWarnings}
			return s.recordSplit(ctx, w, &p, lastWarnings)
		}
		d, unreadable, good, err := p.DecodeReadable()
		if err != nil {
			out = Imported{Skipped: true, Warnings: []string{fmt.Sprintf("project memories not re-imported, searching the last import: %v", err)}}
			return nil
		}
		// The shadows are written while the index takes the rows, as the
		// one file's is (importDecoded). A shard that cannot be decoded
		// keeps the shadow of its last good import, which is what sync
		// repairs it from (RepairShards).
		var shadowed sync.WaitGroup
		shadowed.Go(func() { s.keepShardShadows(w, good) })
		defer shadowed.Wait()
		if out, err = w.importDecoded(ctx, d, p.Tombs, hash, nil); err != nil {
			return err
		}
		// Recorded like every warning of an import, so that each command
		// names the damaged files until they are fixed, and the next
		// change imports whole.
		out.Warnings = append(unreadable, out.Warnings...)
		return s.recordSplit(ctx, w, &p, out.Warnings)
	})
	return out, err
}

// ProjectRead is a project read whole, in either layout, for sync.
type ProjectRead struct {
	Decoded format.Decoded
	locate  acolytedir.LineLocator
	// hash is the content hash an import of the project records, with
	// the tombstones ts.
	hash func(ts acolytedir.Tombstones) string
	// differs reports whether writing next would change the project's
	// files: a byte that differs, or a project that next would split.
	differs func(next []memory.Memory) bool
}

// read reads and decodes every file of the split project.
func (s Shards) read() (ProjectRead, error) {
	p, err := acolytedir.ReadSplit(s.Root)
	if err != nil {
		return ProjectRead{}, err
	}
	d, parts, err := p.Decode()
	if err != nil {
		return ProjectRead{}, err
	}
	hash := func(ts acolytedir.Tombstones) string {
		q := p
		q.Tombs = ts
		return q.Hash()
	}
	differs := func(next []memory.Memory) bool {
		files := acolytedir.EncodeSplit(next, parts)
		have := make(map[string][]byte, len(p.Files))
		for _, f := range p.Files {
			have[f.Rel] = f.Data
		}
		return slices.ContainsFunc(files, func(f acolytedir.ProjectFile) bool { return !bytes.Equal(have[f.Rel], f.Data) })
	}
	return ProjectRead{Decoded: d, locate: p.Locator(), hash: hash, differs: differs}, nil
}

// read reads and decodes the memories file.
func (one OneFile) read() (ProjectRead, error) {
	raw, err := acolytedir.ReadMemories(one.Root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ProjectRead{}, err
	}
	d, err := format.DecodeAll(acolytedir.MemoriesRel, raw)
	if err != nil {
		return ProjectRead{}, err
	}
	hash := func(ts acolytedir.Tombstones) string {
		return acolytedir.WithForgotten(acolytedir.Sha256Hex(raw), ts.Data)
	}
	differs := func(next []memory.Memory) bool {
		if len(next) > format.SplitAt {
			return true
		}
		return (len(raw) > 0 || len(next) > 0) && !bytes.Equal(raw, format.EncodeKeeping(next, d.InvalidLines))
	}
	return ProjectRead{Decoded: d, locate: acolytedir.OneFileLocator(raw), hash: hash, differs: differs}, nil
}

// ReadProject reads and decodes the project under root, in its layout.
func ReadProject(root string) (ProjectRead, error) {
	l, err := LayoutOf(root)
	if err != nil {
		return ProjectRead{}, err
	}
	return l.read()
}

// restampSplit records the stamps CheckFiles found settled in files, under
// the lock and only while the import state is still last, so that a
// write since is never overwritten.
func (s Shards) restampSplit(ctx context.Context, w *Workspace, last string, files map[string]acolytedir.FileRecord) error {
	return w.Locked(ctx, func() error {
		now, err := w.Store.GetState(ctx, w.StateKey())
		if err != nil || now != last {
			return err
		}
		hash, _, warnings := acolytedir.ParseImportState(last)
		return w.Store.SetState(ctx, w.StateKey(), acolytedir.WithFiles(acolytedir.ImportState(hash, "", warnings), files))
	})
}

// MemoriesLocation names where the project under root keeps its memories,
// relative to root, for messages: the one file, or the shards' directory
// once the project is split.
func MemoriesLocation(root string) string {
	l, err := LayoutOf(root)
	if err != nil {
		return acolytedir.MemoriesRel
	}
	return l.location()
}

func (one OneFile) location() string { return acolytedir.MemoriesRel }
func (s Shards) location() string    { return acolytedir.ShardsRel + "/" }

func (one OneFile) attributes() (attrs, ignores []string) { return nil, nil }

// attributes gives the shards the union merge of a clone without acolyte's
// driver, and ignores a killed writer's temporary files among them.
func (s Shards) attributes() (attrs, ignores []string) {
	return []string{ShardsUnionAttribute}, []string{"/" + format.ShardsDir + "/" + atomicfile.TempPrefix + "*"}
}

// refresh imports the shards whose recorded stamps moved, unless the
// import state last still describes every file.
func (s Shards) refresh(ctx context.Context, w *Workspace, last string) (Imported, error) {
	files, ok := acolytedir.StateFiles(last)
	if !ok {
		return s.importSplit(ctx, w)
	}
	holds, restamped := acolytedir.CheckFiles(w.Repo.Root, files, w.Settle)
	if !holds {
		return s.importSplit(ctx, w)
	}
	if restamped {
		// Best effort, as for the one file's stamp: without it the
		// next command re-reads the files that settled.
		_ = s.restampSplit(ctx, w, last, files)
	}
	_, _, lastWarnings := acolytedir.ParseImportState(last)
	return Imported{Skipped: true, Warnings: lastWarnings}, nil
}

// Holds reports whether the import state still describes every file,
// reading none of them: each recorded stamp is its file's.
func (s Shards) Holds(w *Workspace, state string, _ os.FileInfo) bool {
	files, ok := acolytedir.StateFiles(state)
	return ok && acolytedir.FilesHold(w.Repo.Root, files)
}

// writeSplitFiles writes next as a split project over p, whose files were
// read into parts, and returns the files it is now: the shards' directory
// and its union fallback are made first (a project splitting for the first
// time), and nothing is written when a memory would not read back.
func writeSplitFiles(root string, p acolytedir.SplitProject, parts []format.Part, next []memory.Memory) ([]acolytedir.ProjectFile, error) {
	if err := format.CheckMemories(next, acolytedir.ShardsRel); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(acolytedir.ShardsRel)), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", acolytedir.ShardsRel, err)
	}
	if err := EnsureAttributes(root); err != nil {
		return nil, err
	}
	files := acolytedir.EncodeSplit(next, parts)
	return files, acolytedir.WriteSplit(root, p, files)
}
