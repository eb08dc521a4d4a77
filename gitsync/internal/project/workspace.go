package project

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/gitsync/internal/git"
	"github.com/acolyte-dev/acolyte/memory"
)

// Workspace is what the layouts need of a checkout: its repository, the
// index they keep in step with the files, and the checkout's settings.
type Workspace struct {
	Repo  *git.Repo
	Store Store
	Vis   memory.Visibility
	// Settle is how long after its last change the memories file's stamp
	// is trusted (SettleTime; tests shorten it).
	Settle time.Duration
	// Now is the clock the pre-commit hook stamps hand edits with; nil is
	// time.Now (tests fix it, to compare two runs byte for byte).
	Now func() time.Time
	// Warn, when set, is told each problem in the memories file that a
	// command worked around (Checkout.Warn).
	Warn func(message string)
}

// Clock is the time a hand edit is stamped with: Now, or time.Now.
func (w *Workspace) Clock() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Tell passes each of messages to Warn, when it is set.
func (w *Workspace) Tell(messages []string) {
	if w.Warn == nil {
		return
	}
	for _, m := range messages {
		w.Warn(m)
	}
}

// Store is the local index a Checkout keeps in step with the checkout's
// .acolyte/ files (memory/sqlite's Store): an engine that can also replace
// a scope's memories wholesale, as an import does, and keep bookkeeping
// values such as the hash of the file last imported.
type Store interface {
	memory.LocalEngine
	// FindContent returns the memory of one scope and key whose
	// normalised content equals content.
	FindContent(ctx context.Context, scope memory.Scope, key, content string) (memory.Memory, bool, error)
	// Prepare turns a draft into a complete, validated memory with a new
	// id, without storing it.
	Prepare(vis memory.Visibility, d memory.Draft) (memory.Memory, error)
	// ReplaceScope makes the memories of one scope and key exactly ms.
	ReplaceScope(ctx context.Context, scope memory.Scope, key string, ms []memory.Memory) (memory.ReplaceStats, error)
	// GetState reads a bookkeeping value; a missing key reads as "".
	GetState(ctx context.Context, key string) (string, error)
	// SetState writes a bookkeeping value.
	SetState(ctx context.Context, key, value string) error
}

// StateKey names the hash of the memories file last imported for this checkout.
func (w *Workspace) StateKey() string { return "import:" + w.Repo.Root }

// Imported reports what an import changed.
type Imported struct {
	memory.ReplaceStats
	// Skipped is true when the file was unchanged since the last import.
	Skipped bool `json:"skipped"`
	// Warnings are the problems in the file the import worked around:
	// project memories it could not read are missing from the index until
	// the file is fixed, and nothing else is held up.
	Warnings []string `json:"warnings,omitempty"`
}

// Refresh is Checkout.Refresh, for the layouts, which refresh the index
// after a write that another process may have raced.
func (w *Workspace) Refresh(ctx context.Context) (Imported, error) {
	// Every command passes here, so it is where temporary files of killed
	// writers go, even when nothing takes the lock.
	acolytedir.RemoveStaleTemps(w.Repo.Root)
	imp, err := w.refresh(ctx)
	w.Tell(imp.Warnings)
	if msg := UnmergedWarning(ctx, w.Repo); msg != "" {
		w.Tell([]string{msg})
	}
	return imp, err
}

func (w *Workspace) refresh(ctx context.Context) (Imported, error) {
	last, err := w.Store.GetState(ctx, w.StateKey())
	if err != nil {
		return Imported{}, err
	}
	if err := acolytedir.GuardDir(w.Repo.Root); err != nil {
		return Imported{Skipped: true, Warnings: []string{fmt.Sprintf("project memories not imported: %v", err)}}, nil
	}
	l, err := LayoutOf(w.Repo.Root)
	if err != nil {
		return Imported{Skipped: true, Warnings: []string{fmt.Sprintf("project memories not imported: %v", err)}}, nil
	}
	return l.refresh(ctx, w, last)
}

// importDecoded replaces the project's rows with d, the whole memories
// file decoded, less what the tombstones cover, and keeps data, whose
// content hash is hash (nil when there is no file), as the shadow.
func (w *Workspace) importDecoded(ctx context.Context, d format.Decoded, ts acolytedir.Tombstones, hash string, data []byte) (out Imported, err error) {
	out.Warnings = append(d.Warnings(), ts.Warnings...)
	kept, hidden := format.Forget(d.Memories, ts.List)
	if len(hidden) > 0 {
		// A forget killed between its tombstone and its line, or a merge
		// without the driver, left lines the tombstones hide. Recorded as
		// a warning, it sends the next write to the whole rewrite, which
		// drops them, instead of the in-place paths, which would not.
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d forgotten memories still have their lines in %s (a forget that was interrupted, or a merge without acolyte's driver); they are hidden, and the next write or `%s` removes them", len(hidden), MemoriesLocation(w.Repo.Root), acolytedir.FixCommand))
	}
	kept, capped := acolytedir.CapIndexed(kept)
	if capped != "" {
		out.Warnings = append(out.Warnings, capped)
	}
	// The shadow is written while the index takes the rows: at a fresh
	// clone of 100k memories its 22 MB went to the disk on the critical
	// path after a bulk import that keeps one core busy. Written early, it
	// is still trusted only for the hash the import state records, so a
	// failed import leaves it unused.
	var shadowed sync.WaitGroup
	if data != nil {
		shadowed.Go(func() { w.Shadows().KeepShadow(hash, data) })
	}
	defer shadowed.Wait()
	if out.ReplaceStats, err = w.Store.ReplaceScope(ctx, memory.ScopeProject, w.Repo.Root, kept); err != nil {
		return out, err
	}
	return out, w.recordHandEdits(ctx, kept, out.Revised)
}

// HandEditsToStamp is what a write of mems, read from a file with content
// hash hash, stamps: the hand edits imports recorded and, when the file is
// not what was last imported, those it holds against the index, which the
// write is about to overwrite. The index's rows are read only then, so
// after an import this costs two state reads.
func (w *Workspace) HandEditsToStamp(ctx context.Context, mems []memory.Memory, hash string) (map[string]time.Time, error) {
	pending, err := w.PendingHandEdits(ctx)
	if err != nil {
		return nil, err
	}
	last, err := w.Store.GetState(ctx, w.StateKey())
	if err != nil {
		return nil, err
	}
	if lastHash, _, _ := acolytedir.ParseImportState(last); lastHash == hash || len(mems) == 0 {
		return pending, nil
	}
	indexed, err := w.Store.List(ctx, w.Vis, memory.Filter{Scope: memory.ScopeProject})
	if err != nil {
		return nil, err
	}
	found := HandEdits(mems, indexed)
	if pending == nil {
		return found, nil
	}
	maps.Copy(pending, found)
	return pending, nil
}

// Locked runs fn holding the .acolyte/ lock. Without a .acolyte/ directory
// there is nothing to guard and no directory is created.
func (w *Workspace) Locked(ctx context.Context, fn func() error) error {
	dir := filepath.Join(w.Repo.Root, format.Dir)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fn()
	}
	lockCtx := ctx
	wait, bounded := lockWait(ctx)
	if bounded {
		var cancel context.CancelFunc
		lockCtx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	unlock, err := acolytedir.LockDir(lockCtx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	if ww, ok := w.Store.(writableWaiter); ok && bounded {
		if err := ww.WaitWritable(ctx, wait); err != nil {
			return err
		}
	}
	return fn()
}

// Change edits the memories file under the lock and re-imports it in the
// same critical section, so the index follows the file at once.
func (w *Workspace) Change(ctx context.Context, edit func([]memory.Memory) ([]memory.Memory, error)) (memory.ReplaceStats, error) {
	var stats memory.ReplaceStats
	if err := acolytedir.GuardDir(w.Repo.Root); err != nil {
		return stats, err
	}
	dir := filepath.Join(w.Repo.Root, format.Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return stats, fmt.Errorf("create %s: %w", dir, err)
	}
	if err := EnsureAttributes(w.Repo.Root); err != nil {
		return stats, err
	}
	err := w.Locked(ctx, func() error {
		l, err := LayoutOf(w.Repo.Root)
		if err != nil {
			return err
		}
		stats, err = l.rewrite(ctx, w, edit)
		return err
	})
	return stats, err
}

// Synced reports what Sync changed.
type Synced struct {
	// Changes lists how the derived rules and seeds changed in the file.
	Changes []Change `json:"changes"`
	Import  Imported `json:"import"`
	// Warnings are files that were not read (symlinks leading out of the
	// repository); nothing of them was written.
	Warnings []derive.Refusal `json:"warnings,omitempty"`
	// Refused are rules and seeds that were not written because they hold
	// a secret or are not valid memories; every other one was.
	Refused []derive.Refusal `json:"refused,omitempty"`
	// Resolved says how the project's memories were merged by id, when a
	// merge, revert, cherry-pick or rebase had left a file of them
	// unmerged (ResolveConflicts).
	Resolved string `json:"resolved,omitempty"`
	// Repaired says, per shard that could not be decoded, what sync
	// recovered of it and from where, and what it could not
	// (RepairShards).
	Repaired []ShardRepair `json:"repaired,omitempty"`
}

// storedSecrets reports the stored memories of the file that hold a
// secret in any field, as a hand edit or a merge without the driver can
// leave them: sync keeps them, since the file is the truth and dropping a
// line unasked loses it, but says so, with the fix, as check does. locate
// says which file, and which line of it, holds an id.
func storedSecrets(locate acolytedir.LineLocator, mems []memory.Memory) []derive.Refusal {
	var out []derive.Refusal
	for _, m := range mems {
		sec, found := format.FindSecret(m)
		if !found || derive.IsDerived(m) {
			continue
		}
		rel, line := locate(m.ID)
		fix := "run `acolyte forget " + m.ID + "`"
		if sec.Field == "id" {
			fix = "delete that line"
		}
		out = append(out, derive.Refusal{File: rel, Line: line, Problem: derive.ProblemSecret, Secret: sec.Kind,
			Message: fmt.Sprintf("%s %s; %s, rotate the credential and commit %s", sec.Name(m, fmt.Sprintf("on line %d", line)), sec.Phrase(), fix, rel)})
	}
	return out
}

// Sync is Sync given the pending hand edits and the time they are stamped
// with, which the pre-commit hook shares so that the commit it stamps and
// the worktree agree.
func (w *Workspace) Sync(ctx context.Context, pending map[string]time.Time, now time.Time) (Synced, error) {
	d, err := derive.Worktree(w.Repo.Root)
	if err != nil {
		return Synced{}, err
	}
	out := Synced{Warnings: d.Skipped, Refused: d.Refused}
	derived := d.Memories
	read, err := ReadProject(w.Repo.Root)
	if err != nil {
		return out, err
	}
	decoded := read.Decoded
	ts, err := w.tidyTombstones(ctx, decoded.Memories, now)
	if err != nil {
		return out, err
	}
	current, _ := format.Forget(decoded.Memories, ts.List)
	out.Refused = append(out.Refused, storedSecrets(read.locate, current)...)
	// The index still holds what the file said at the last import, which
	// is how a hand edit that kept its updated time is told apart. While
	// the file is what was last imported there is nothing to tell apart,
	// and the pre-commit hook, which syncs on every commit, reads no rows.
	// A command that ran since the edit imported it already, and left it
	// in the pending hand edits instead, which change stamps.
	last, err := w.Store.GetState(ctx, w.StateKey())
	if err != nil {
		return out, err
	}
	var indexed []memory.Memory
	if lastHash, _, _ := acolytedir.ParseImportState(last); lastHash != read.hash(ts) {
		if indexed, err = w.Store.List(ctx, w.Vis, memory.Filter{Scope: memory.ScopeProject}); err != nil {
			return out, err
		}
	}
	current = StampHandEdits(MarkHandEdits(current, indexed, now), pending, now)
	// Comparing bytes, not memories, also rewrites a file that a union
	// merge left out of order.
	if next := derive.Refresh(current, derived); read.differs(next) {
		out.Import.ReplaceStats, err = w.Change(ctx, func(mems []memory.Memory) ([]memory.Memory, error) {
			mems = StampHandEdits(MarkHandEdits(mems, indexed, now), pending, now)
			next := derive.Refresh(mems, derived)
			out.Changes = Diff(mems, next)
			return next, nil
		})
		return out, err
	}
	out.Import, err = w.Refresh(ctx)
	return out, err
}

// tidyTombstones makes forgotten.jsonl canonical (a union merge leaves it
// out of order) and compacts it, under the lock, and returns what it holds
// then. inFile is what memories.jsonl holds, whose tombstones stay however
// old they are, or the memories would come back. An invalid line refuses
// the sync, as one in the memories file does.
func (w *Workspace) tidyTombstones(ctx context.Context, inFile []memory.Memory, now time.Time) (acolytedir.Tombstones, error) {
	var out acolytedir.Tombstones
	err := w.Locked(ctx, func() error {
		ts, err := acolytedir.ReadTombstones(w.Repo.Root)
		if err != nil {
			return err
		}
		if len(ts.Warnings) > 0 {
			return fmt.Errorf("%w: %s", format.ErrInvalidFile, ts.Warnings[0])
		}
		ids := make(map[string]bool, len(inFile))
		for _, m := range inFile {
			ids[m.ID] = true
		}
		compacted := format.Compact(ts.List, ids, now)
		out = acolytedir.Tombstones{Data: format.EncodeForgotten(compacted), List: compacted}
		if bytes.Equal(ts.Data, out.Data) {
			return nil
		}
		return format.WriteForgotten(w.Repo.Root, compacted)
	})
	return out, err
}

// Shadows returns the checkout's shadow files.
func (w *Workspace) Shadows() acolytedir.ShadowFiles {
	return acolytedir.ShadowFiles{Dir: CacheDir(w.Repo)}
}
