package gitsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/secrets"
	"github.com/acolyte-dev/acolyte/memory"
)

// Edit revises a memory visible from this checkout. A project memory is
// rewritten in .acolyte/memories.jsonl first, with a later updated time, so
// that a merge with a branch holding the old text keeps this edit. Rules
// and seeds are derived from their files, so they are edited there.
func (w *Workspace) Edit(ctx context.Context, id string, r memory.Revision) (memory.Memory, error) {
	if _, err := w.Refresh(ctx); err != nil {
		return memory.Memory{}, err
	}
	m, err := w.store.Get(ctx, w.vis, id)
	if err != nil {
		return memory.Memory{}, err
	}
	if m.Scope != memory.ScopeProject {
		return memory.Scoped{Store: w.store, Visibility: w.vis}.Edit(ctx, id, r)
	}
	if IsDerived(m) {
		return memory.Memory{}, fmt.Errorf("%s is derived from %s; edit that file and run `acolyte sync`", id, m.Source)
	}
	if what, found := secrets.Detect(r.Content); found {
		return memory.Memory{}, projectSecretError(what)
	}
	if m, err = w.store.Revise(m, r); err != nil {
		return memory.Memory{}, err
	}
	m.Commit = w.Repo.Head()
	m.Paths = MentionedPaths(w.Repo.Root, m.Content)
	err = w.patch(ctx, func(data []byte) ([][]byte, error) {
		return format.ReplaceLine(data, m)
	}, func() error {
		_, err := w.store.Put(ctx, m)
		return err
	})
	if !errors.Is(err, format.ErrNotPatchable) {
		return m, err
	}
	_, err = w.change(ctx, func(mems []memory.Memory) ([]memory.Memory, error) {
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

// MarkHandEdits moves the updated time of every memory whose content or
// topic in the file differs from the index's copy while its updated time
// does not: someone edited the line by hand. Without it, the hand edit
// would tie with the old text in a merge and lose on content order.
func MarkHandEdits(file, indexed []memory.Memory, now time.Time) []memory.Memory {
	before := make(map[string]memory.Memory, len(indexed))
	for _, m := range indexed {
		before[m.ID] = m
	}
	now = now.UTC().Truncate(time.Millisecond)
	for i, m := range file {
		old, ok := before[m.ID]
		if !ok || IsDerived(m) || !m.UpdatedAt.Equal(old.UpdatedAt) || (m.Content == old.Content && m.Topic == old.Topic) {
			continue
		}
		file[i].UpdatedAt = now
		if !now.After(old.UpdatedAt) {
			file[i].UpdatedAt = old.UpdatedAt.Add(time.Millisecond)
		}
	}
	return file
}
