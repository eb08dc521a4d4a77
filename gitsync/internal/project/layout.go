// Package project keeps a checkout's project memories and its index in
// step: the two layouts of the .acolyte/ files (Layout: OneFile and
// Shards), importing them into the index, writing one change in place or
// rewriting them, sync's reconciliation, the repair of a damaged shard,
// the resolution of a conflicted merge and the check CI runs. It knows a
// checkout only as a Workspace (the repository, the Store, the settings),
// builds on acolytedir for the files and git for the plumbing, and knows
// nothing of the hooks, the CLI or any engine.
package project

import (
	"context"
	"os"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/memory"
)

// Layout is a project's memories in one of the two layouts they take in
// .acolyte/: one file, memories.jsonl, or, past format.SplitAt memories,
// shards under memories/. It is every operation whose work differs
// between the two, and LayoutOf is the one place that asks which a
// checkout has: the workspace, Update, Check, sync and the hooks call
// these methods and never branch on the layout themselves.
//
// The one-file layout turns itself into shards when a write takes it past
// format.SplitAt; a split project stays split.
type Layout interface {
	// attributes are the lines .acolyte/.gitattributes and .gitignore need
	// beyond the ones every layout has.
	attributes() (attrs, ignores []string)
	// location names where the memories are, relative to the root, for
	// messages: the one file, or the shards' directory.
	location() string

	// read reads and decodes the project whole, for sync.
	read() (ProjectRead, error)
	// update applies change to the memories no tombstone covers and
	// writes the result; the caller holds the lock (Update).
	update(change func([]memory.Memory) ([]memory.Memory, error)) error
	// check reads the files for Check, adding their problems to report.
	check(report *Report) (existing []memory.Memory, locate acolytedir.LineLocator, missing, unreadable bool, err error)
	// MergeLeftUntidy reports, reading little, whether a merge left the
	// files in a form that check fails and sync tidies (see the hook's
	// mergeLeftUntidy).
	MergeLeftUntidy() bool
	// problemFile is the file a problem names, given the file its line is
	// in: a one-file project's problems name only the line.
	problemFile(file string) string

	// refresh brings the index to the files unless the import state last
	// still describes them.
	refresh(ctx context.Context, w *Workspace, last string) (Imported, error)
	// Holds reports whether the import state still describes the files,
	// reading none of them; memories is the stat of the one file.
	Holds(w *Workspace, state string, memories os.FileInfo) bool
	// rewrite applies edit to every memory and rewrites the files and the
	// index; the caller holds the lock.
	rewrite(ctx context.Context, w *Workspace, edit func([]memory.Memory) ([]memory.Memory, error)) (memory.ReplaceStats, error)

	// Add, remove and replace write one change in place, touching only
	// the lines it changes. format.ErrNotPatchable sends the caller to
	// rewrite, which is always correct.
	Add(ctx context.Context, w *Workspace, m memory.Memory) (memory.Added, error)
	Remove(ctx context.Context, w *Workspace, mems []memory.Memory, now time.Time) error
	Replace(ctx context.Context, w *Workspace, m memory.Memory) error
}

// LayoutOf returns the layout of the project under root.
func LayoutOf(root string) (Layout, error) {
	split, err := acolytedir.IsSplit(root)
	if err != nil {
		return nil, err
	}
	if split {
		return Shards{Root: root}, nil
	}
	return OneFile{Root: root}, nil
}

// OneFile is the layout of a project that keeps its memories in
// .acolyte/memories.jsonl: its in-place writes are onefile_patch.go, its
// import and rewrite are in workspace.go.
type OneFile struct{ Root string }

// Shards is the layout of a split project: shards*.go, one file per job
// (reading and writing, in-place writes, import, sync, pre-commit).
type Shards struct{ Root string }

// AddInPlace, RemoveInPlace and ReplaceInPlace write one change to the
// checkout's files in place (layout's add, remove and replace). A layout
// that cannot be told gives format.ErrNotPatchable, sending the caller to
// change, which says why.
func (w *Workspace) AddInPlace(ctx context.Context, m memory.Memory) (memory.Added, error) {
	l, err := LayoutOf(w.Repo.Root)
	if err != nil {
		return memory.Added{}, format.ErrNotPatchable
	}
	return l.Add(ctx, w, m)
}

func (w *Workspace) RemoveInPlace(ctx context.Context, mems []memory.Memory, now time.Time) error {
	l, err := LayoutOf(w.Repo.Root)
	if err != nil {
		return format.ErrNotPatchable
	}
	return l.Remove(ctx, w, mems, now)
}

func (w *Workspace) ReplaceInPlace(ctx context.Context, m memory.Memory) error {
	l, err := LayoutOf(w.Repo.Root)
	if err != nil {
		return format.ErrNotPatchable
	}
	return l.Replace(ctx, w, m)
}

// Replace rewrites m's line in the memories file.
func (one OneFile) Replace(ctx context.Context, w *Workspace, m memory.Memory) error {
	return one.patch(ctx, w, map[string][]byte{m.ID: format.Line(m)}, func(data []byte) ([][]byte, error) {
		return format.ReplaceLine(data, m)
	}, func() error {
		_, err := w.Store.Put(ctx, m)
		return err
	})
}

// MergeLeftUntidy is false: acolyte's driver merges the one file into its
// canonical form.
func (one OneFile) MergeLeftUntidy() bool { return false }

// MergeLeftUntidy reports whether the inbox holds memories: the side of a
// merge that had not split added them to the one file, which acolyte's
// driver merges as the inbox.
func (s Shards) MergeLeftUntidy() bool {
	inbox, err := acolytedir.ReadMemories(s.Root)
	return err == nil && len(inbox) > len(format.Encode(nil))
}
