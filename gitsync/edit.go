package gitsync

import (
	"context"
	"errors"
	"fmt"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// Edit revises a memory visible from this checkout. A project memory is
// rewritten in .acolyte/memories.jsonl first, with a later updated time, so
// that a merge with a branch holding the old text keeps this edit. Rules
// and seeds are derived from their files, so they are edited there.
func (w *Checkout) Edit(ctx context.Context, id string, r memory.Revision) (memory.Memory, error) {
	if _, err := w.Refresh(ctx); err != nil {
		return memory.Memory{}, err
	}
	m, err := w.ws.Store.Get(ctx, w.ws.Vis, id)
	if err != nil {
		return memory.Memory{}, err
	}
	if m.Scope != memory.ScopeProject {
		return memory.Scoped{Store: w.ws.Store, Visibility: w.ws.Vis, Guard: RefuseSecret}.Edit(ctx, id, r)
	}
	if derive.IsDerived(m) {
		return memory.Memory{}, fmt.Errorf("%w: %s is derived from %s; edit that file and run `acolyte sync`", ErrDerivedKind, id, m.Source)
	}
	if err := RefuseSecret(r.Revised(m)); err != nil {
		return memory.Memory{}, err
	}
	if m, err = w.ws.Store.Revise(m, r); err != nil {
		return memory.Memory{}, err
	}
	m.Commit = w.Repo.Head()
	m.Paths = MentionedPaths(w.Repo.Root, m.Content)
	if err := RefuseSecret(m); err != nil {
		return memory.Memory{}, err
	}
	if err = w.ws.ReplaceInPlace(ctx, m); !errors.Is(err, format.ErrNotPatchable) {
		return m, err
	}
	_, err = w.ws.Change(ctx, func(mems []memory.Memory) ([]memory.Memory, error) {
		for i := range mems {
			if mems[i].ID == id {
				mems[i] = m
				return mems, nil
			}
		}
		return nil, fmt.Errorf("%w: %s is no longer in %s/%s", memory.ErrNotFound, id, format.Dir, format.MemoriesFile)
	})
	return m, err
}
