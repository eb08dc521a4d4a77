package project

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/memory"
)

// SyncAfterCommit is the worktree's sync at the end of a pre-commit hook,
// which has just staged the same derived memories: for a split project
// whose index holds every file, it changes only the shards of the derived
// memories that differ (SyncShards); otherwise it is sync.
func (s Shards) SyncAfterCommit(ctx context.Context, w *Workspace, pending map[string]time.Time, now time.Time) (Synced, error) {
	if out, ok, err := s.SyncShards(ctx, w, pending); ok || err != nil {
		return out, err
	}
	return w.Sync(ctx, pending, now)
}

// SyncShards re-derives the rules and seeds of a split project into the
// shards they fall in. The derived memories the project holds are read from
// the index, which Refresh brings to the files first; ok is false, having
// written nothing, when the full sync must run: a hand edit to stamp, an
// import that worked around a bad line, a project not split, or a file
// the index does not vouch for (patchSplit). It neither compacts
// forgotten.jsonl nor reports secrets already stored, which the full sync
// and check do.
func (s Shards) SyncShards(ctx context.Context, w *Workspace, pending map[string]time.Time) (Synced, bool, error) {
	if split, err := acolytedir.IsSplit(w.Repo.Root); err != nil || !split || len(pending) > 0 {
		return Synced{}, false, err
	}
	d, err := derive.Worktree(w.Repo.Root)
	if err != nil {
		return Synced{}, false, err
	}
	out := Synced{Warnings: d.Skipped, Refused: d.Refused}
	imp, err := w.Refresh(ctx)
	if err != nil || len(imp.Warnings) > 0 {
		return Synced{}, false, err
	}
	if again, err := w.PendingHandEdits(ctx); err != nil || len(again) > 0 {
		return Synced{}, false, err
	}
	current, err := s.derivedInIndex(ctx, w, d.Memories)
	if err != nil {
		return Synced{}, false, err
	}
	next := derive.Refresh(current, d.Memories)
	out.Changes = Diff(current, next)
	if len(out.Changes) == 0 {
		out.Import = imp
		return out, true, nil
	}
	// Each shard a change falls in is rewritten with the derived (and
	// taken) memories it held replaced by next's.
	managed := make(map[string]bool, len(current))
	for _, m := range current {
		managed[m.ID] = true
	}
	inNext := make(map[string]memory.Memory, len(next))
	for _, m := range next {
		inNext[m.ID] = m
	}
	edits := make(map[string]acolytedir.ShardEdit)
	var put []memory.Memory
	var removed []string
	for _, c := range out.Changes {
		if m, ok := inNext[c.ID]; ok {
			put = append(put, m)
		} else {
			removed = append(removed, c.ID)
		}
		shard := format.ShardOf(c.ID)
		edits[shard] = func(mems []memory.Memory) ([]memory.Memory, error) {
			mems = slices.DeleteFunc(mems, func(m memory.Memory) bool { return managed[m.ID] })
			for _, m := range next {
				if format.ShardOf(m.ID) == shard {
					mems = append(mems, m)
				}
			}
			return mems, nil
		}
	}
	err = s.patchSplit(ctx, w, edits, nil, func() error {
		if len(removed) > 0 {
			if _, err := w.Store.Delete(ctx, w.Vis, removed...); err != nil {
				return err
			}
		}
		for _, m := range put {
			m.Scope, m.ScopeKey = memory.ScopeProject, w.Repo.Root
			added, err := w.Store.Put(ctx, m)
			if err != nil {
				return err
			}
			if added.Warning != "" {
				out.Import.Warning = added.Warning
			}
		}
		return nil
	})
	if errors.Is(err, format.ErrNotPatchable) {
		return Synced{}, false, nil
	}
	out.Import.Added, out.Import.Removed = len(put), len(removed)
	return out, err == nil, err
}

// derivedInIndex is what Refresh may change among the project memories the
// index holds, given the memories the worktree derives now: every rule and
// seed, and any stored memory whose id a derived one takes. It reads them
// by kind (memories_by_kind) and by id, not the whole project.
func (s Shards) derivedInIndex(ctx context.Context, w *Workspace, derived []memory.Memory) ([]memory.Memory, error) {
	var current []memory.Memory
	for _, kind := range []memory.Kind{memory.KindRule, memory.KindSeed} {
		mems, err := w.Store.List(ctx, w.Vis, memory.Filter{Scope: memory.ScopeProject, Kind: kind})
		if err != nil {
			return nil, err
		}
		current = append(current, slices.DeleteFunc(mems, func(m memory.Memory) bool { return !derive.IsDerived(m) })...)
	}
	// A derived memory may take the id of one the project stores.
	have := make(map[string]bool, len(current))
	for _, m := range current {
		have[m.ID] = true
	}
	for _, m := range derived {
		if have[m.ID] {
			continue
		}
		taken, err := w.Store.Get(ctx, w.Vis, m.ID)
		if errors.Is(err, memory.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		current = append(current, taken)
	}
	return current, nil
}
