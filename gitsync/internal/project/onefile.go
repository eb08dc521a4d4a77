package project

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/memory"
)

// refresh imports the memories file unless the import state last still
// describes it; with no file, it derives the rules and seeds.
func (one OneFile) refresh(ctx context.Context, w *Workspace, last string) (Imported, error) {
	lastHash, _, lastWarnings := acolytedir.ParseImportState(last)
	before, statErr := os.Stat(format.MemoriesPath(w.Repo.Root))
	if errors.Is(statErr, fs.ErrNotExist) {
		return one.deriveUnsynced(ctx, w, lastHash)
	}
	if statErr == nil && (OneFile{}).Holds(w, last, before) {
		return Imported{Skipped: true, Warnings: lastWarnings}, nil
	}
	// importFile reads and hashes the file once, and leaves the index
	// alone when the content is what was last imported.
	return one.importFile(ctx, w)
}

// Holds reports whether the import state still describes the memories
// file, whose stat is memories, without reading it: the settled stamp the
// state records is the file's (with forgotten.jsonl's), or, right after
// acolyte's own write, before the stamp has settled, the writer's
// fingerprint vouches for it (fingerprint.go).
func (one OneFile) Holds(w *Workspace, state string, memories os.FileInfo) bool {
	if _, ok := acolytedir.StateFiles(state); ok {
		return false // the state describes shards, since joined
	}
	_, lastStamp, _ := acolytedir.ParseImportState(state)
	fbefore, fstatErr := os.Stat(format.ForgottenPath(w.Repo.Root))
	if lastStamp != "" && lastStamp == git.Stamp(memories)+acolytedir.ForgottenStamp(fbefore, fstatErr) {
		return true
	}
	return one.Fingerprinted(w, state)
}

// unsyncedPrefix marks an import state that holds rules derived on read,
// for a repository that has no memories file yet.
const unsyncedPrefix = "unsynced:"

// deriveUnsynced makes AGENTS.md and friends searchable before the first
// sync: with no memories file there is nothing to import, so the index gets
// the rules and seeds the worktree derives, as sync would write them. It
// derives again only when the root's instruction files or seeds.json
// changed (their content hashes, three or four small reads), so the no-op
// path walks no tree; a nested AGENTS.md added later waits for sync.
// Nothing is written to the worktree: that is sync's and init's to do.
func (one OneFile) deriveUnsynced(ctx context.Context, w *Workspace, lastHash string) (Imported, error) {
	key, err := unsyncedKey(w.Repo.Root)
	if err != nil {
		return Imported{}, err
	}
	if key == lastHash || (key == unsyncedPrefix && lastHash == "") {
		return Imported{Skipped: true}, nil
	}
	var mems []memory.Memory
	var warnings []string
	if key != unsyncedPrefix {
		d, err := derive.Worktree(w.Repo.Root)
		if err != nil {
			return Imported{}, err
		}
		mems = d.Memories
		for _, f := range append(d.Skipped, d.Refused...) {
			warnings = append(warnings, f.Error())
		}
	}
	var out Imported
	err = w.Locked(ctx, func() error {
		if out.ReplaceStats, err = w.Store.ReplaceScope(ctx, memory.ScopeProject, w.Repo.Root, mems); err != nil {
			return err
		}
		return w.Store.SetState(ctx, w.StateKey(), acolytedir.ImportState(key, "", warnings))
	})
	out.Warnings = warnings
	return out, err
}

// unsyncedKey names the content of the files deriveUnsynced reads, or is
// the bare prefix when there are none.
func unsyncedKey(root string) (string, error) {
	key := unsyncedPrefix
	for _, name := range append(slices.Clone(derive.InstructionNames), format.Dir+"/"+derive.SeedsFile) {
		h, err := acolytedir.HashFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return "", err
		}
		if h != "absent" {
			key += name + "=" + h[:16] + ","
		}
	}
	return key, nil
}

// settledStamps is SettledStamp of the memories file joined with that of
// forgotten.jsonl when it exists; empty unless both are settled.
func (one OneFile) settledStamps(w *Workspace, before os.FileInfo, statErr error, fbefore os.FileInfo, fstatErr error) string {
	s := acolytedir.SettledStamp(format.MemoriesPath(w.Repo.Root), before, statErr, w.Settle)
	if s == "" || fstatErr != nil {
		return s
	}
	f := acolytedir.SettledStamp(format.ForgottenPath(w.Repo.Root), fbefore, fstatErr, w.Settle)
	if f == "" {
		return ""
	}
	return s + "|" + f
}

// importFile makes the index equal to the file, under the file lock so a
// concurrent write cannot slip between the read and the index update.
func (one OneFile) importFile(ctx context.Context, w *Workspace) (Imported, error) {
	var out Imported
	err := w.Locked(ctx, func() error {
		path := format.MemoriesPath(w.Repo.Root)
		before, statErr := os.Stat(path)
		fbefore, fstatErr := os.Stat(format.ForgottenPath(w.Repo.Root))
		data, err := acolytedir.ReadMemories(w.Repo.Root)
		present := err == nil
		hash := ""
		if !present {
			if hash, err = acolytedir.FileHash(nil, err); err != nil {
				out.Warnings = []string{fmt.Sprintf("project memories not imported: %v", err)}
				return nil
			}
		}
		// The file is hashed on one core while the other works out its
		// line diff from the shadow (PlanDiff), which needs no hash.
		var hashed sync.WaitGroup
		var h acolytedir.Hasher
		if present {
			hashed.Go(func() {
				h = acolytedir.HashParts(data) // once: the fingerprint keeps its state
				hash = acolytedir.HexSum(h)
			})
		}
		defer hashed.Wait()
		ts, terr := acolytedir.ReadTombstones(w.Repo.Root)
		last, err := w.Store.GetState(ctx, w.StateKey())
		if err != nil {
			return err
		}
		var plan *diffPlan
		if present && terr == nil {
			if plan, err = one.PlanDiff(ctx, w, data, last, ts); err != nil {
				return err
			}
		}
		hashed.Wait()
		if lastHash, _, lastWarnings := acolytedir.ParseImportState(last); terr == nil && (acolytedir.WithForgotten(hash, ts.Data) == lastHash || hash == "absent" && lastHash == "") {
			// Touched, not changed (or changed back): only the stamps are new.
			plan.close()
			out = Imported{Skipped: true, Warnings: lastWarnings}
			stamps := one.settledStamps(w, before, statErr, fbefore, fstatErr)
			if stamps == "" || h == nil {
				return nil
			}
			fp := acolytedir.NewFingerprint(acolytedir.JoinStamps(w.Repo.Root, before), acolytedir.TailOf(data), h)
			// Best effort: without the stamp the next run reads the file again.
			_ = w.Store.SetState(ctx, w.StateKey(), acolytedir.WithFingerprint(acolytedir.ImportState(lastHash, stamps, lastWarnings), fp))
			return nil
		}
		var d format.Decoded
		diffed := false
		if plan != nil {
			if out, diffed, err = one.ApplyDiff(ctx, w, plan, hash, data); err != nil {
				return err
			}
		}
		if err == nil && !diffed {
			d, err = format.DecodeAll(format.Dir+"/"+format.MemoriesFile, data)
		}
		if err == nil {
			err = terr
		}
		if diffed {
			// Only the lines that changed were read and indexed.
		} else if err != nil {
			// The last import stays searchable until the file is fixed.
			out.Warnings = []string{fmt.Sprintf("project memories not re-imported, searching the last import: %v", err)}
			out.Skipped = true
		} else if out, err = w.importDecoded(ctx, d, ts, hash, data); err != nil {
			return err
		}
		stamps := one.settledStamps(w, before, statErr, fbefore, fstatErr)
		// A file someone else wrote is fingerprinted, like stamped, only
		// once settled: it may change again within its clock tick.
		var fp acolytedir.Fingerprint
		if stamps != "" && h != nil {
			fp = acolytedir.NewFingerprint(acolytedir.JoinStamps(w.Repo.Root, before), acolytedir.TailOf(data), h)
		}
		return w.Store.SetState(ctx, w.StateKey(), acolytedir.WithFingerprint(acolytedir.ImportState(acolytedir.WithForgotten(hash, ts.Data), stamps, out.Warnings), fp))
	})
	return out, err
}

// readForWrite reads the memories file for a writer: an id on two lines is
// resolved (and told to Warn, since the write drops the other line), and
// each line that is not a valid memory is told to Warn and returned as it
// is, for the write to keep (format.EncodeKeeping): one bad line blocks no
// write and is never lost. It also returns the file's content hash.
//
// Memories forgotten.jsonl covers are left out of d.Memories, so the write
// drops their lines, which a merge without acolyte's driver may have
// brought back; an invalid tombstone refuses the write (a memory it meant
// to hide cannot be told apart).
func (one OneFile) readForWrite(w *Workspace) (d format.Decoded, hash string, err error) {
	ts, err := acolytedir.ReadTombstones(w.Repo.Root)
	if err != nil {
		return d, "", err
	}
	if len(ts.Warnings) > 0 {
		return d, "", fmt.Errorf("%w: %s", format.ErrInvalidFile, ts.Warnings[0])
	}
	data, err := acolytedir.ReadMemories(w.Repo.Root)
	hash, herr := acolytedir.FileHash(data, err)
	hash = acolytedir.WithForgotten(hash, ts.Data)
	if errors.Is(err, fs.ErrNotExist) {
		return d, hash, nil
	}
	if herr != nil {
		return d, "", fmt.Errorf("reading project memories: %w", herr)
	}
	if d, err = format.DecodeAll(format.Dir+"/"+format.MemoriesFile, data); err != nil {
		return d, "", err
	}
	w.Tell(d.Warnings())
	d.Memories, _ = format.Forget(d.Memories, ts.List)
	return d, hash, nil
}

// rewrite is change for the one file: it reads the file, applies edit, and
// writes every line (or the shards, when edit takes the project past
// format.SplitAt).
func (one OneFile) rewrite(ctx context.Context, w *Workspace, edit func([]memory.Memory) ([]memory.Memory, error)) (memory.ReplaceStats, error) {
	var stats memory.ReplaceStats
	path := format.MemoriesPath(w.Repo.Root)
	d, hash, err := one.readForWrite(w)
	if err != nil {
		return stats, err
	}
	mems := d.Memories
	// A write rewrites every line and puts them in the index, so it is
	// where hand edits get their stamp, or they would be lost.
	pending, err := w.HandEditsToStamp(ctx, mems, hash)
	if err != nil {
		return stats, err
	}
	indexed := slices.Clone(mems) // what the index holds, whatever edit does to mems
	next, err := edit(mems)
	if err != nil {
		return stats, err
	}
	next = StampHandEdits(next, pending, time.Now())
	// The index is brought to the file by the memories that changed
	// when it held exactly mems (the file was what was last imported
	// or written, and nothing was worked around), else by replacing
	// the scope.
	last, err := w.Store.GetState(ctx, w.StateKey())
	if err != nil {
		return stats, err
	}
	lastHash, _, warnings := acolytedir.ParseImportState(last)
	exact := lastHash == hash && len(warnings) == 0 && len(d.InvalidLines) == 0 && len(d.Duplicates) == 0
	if len(next) > format.SplitAt {
		// The write that takes the project past one file splits it.
		parts := []format.Part{{File: format.MemoriesFile, Decoded: d}}
		if err := (Shards{Root: w.Repo.Root}).writeSplitIndexed(ctx, w, acolytedir.SplitProject{}, parts, indexed, next, exact, &stats); err != nil {
			return stats, err
		}
		if len(pending) > 0 {
			return stats, w.SetPendingHandEdits(ctx, nil)
		}
		return stats, nil
	}
	if err := format.WriteFileKeeping(path, next, d.InvalidLines); err != nil {
		return stats, err
	}
	done, err := w.indexWritten(ctx, path, func() (err error) {
		stats, err = w.indexChanges(ctx, exact, indexed, next)
		return err
	})
	if !done {
		return stats, err
	}
	written, fp, err := acolytedir.HashFingerprinted(w.Repo.Root)
	if err != nil {
		return stats, err
	}
	// edit may have added tombstones (a forget).
	ts, err := acolytedir.ReadTombstones(w.Repo.Root)
	if err != nil {
		return stats, err
	}
	state := acolytedir.WithForgotten(written, ts.Data)
	if len(d.InvalidLines) > 0 {
		// Recorded like an import's warnings: every command goes on
		// naming the kept lines (at their new place), and the patch
		// fast path leaves a file it cannot read whole alone.
		kept, _ := format.DecodeAll(format.Dir+"/"+format.MemoriesFile, format.EncodeKeeping(next, d.InvalidLines))
		state = acolytedir.ImportState(state, "", kept.Warnings())
	}
	if err := w.Store.SetState(ctx, w.StateKey(), acolytedir.WithFingerprint(state, fp)); err != nil {
		return stats, err
	}
	if data, err := os.ReadFile(path); err == nil {
		w.Shadows().KeepShadow(acolytedir.Sha256Hex(data), data)
	}
	if len(pending) > 0 {
		return stats, w.SetPendingHandEdits(ctx, nil)
	}
	return stats, nil
}
