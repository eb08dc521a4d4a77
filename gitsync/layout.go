package gitsync

import (
	"context"

	"os"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"

	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"

	"github.com/acolyte-dev/acolyte/memory"
)

// A project's memories sit in .acolyte/ in one of two layouts: one file,
// memories.jsonl, or, past format.SplitAt memories, shards under
// memories/. layout is every operation whose work differs
// between the two, and layoutOf is the one place that asks which a
// checkout has: the workspace, Update, Check, sync and the hooks call
// these methods and never branch on the layout themselves.
//
// The one-file layout turns itself into shards when a write takes it past
// format.SplitAt; a split project stays split.
type layout interface {
	// attributes are the lines .acolyte/.gitattributes and .gitignore need
	// beyond the ones every layout has.
	attributes() (attrs, ignores []string)
	// location names where the memories are, relative to the root, for
	// messages: the one file, or the shards' directory.
	location() string

	// read reads and decodes the project whole, for sync.
	read() (projectRead, error)
	// update applies change to the memories no tombstone covers and
	// writes the result; the caller holds the lock (Update).
	update(change func([]memory.Memory) ([]memory.Memory, error)) error
	// check reads the files for Check, adding their problems to report.
	check(report *Report) (existing []memory.Memory, locate acolytedir.LineLocator, missing, unreadable bool, err error)
	// mergeLeftUntidy reports, reading little, whether a merge left the
	// files in a form that check fails and sync tidies (see the hook's
	// mergeLeftUntidy).
	mergeLeftUntidy() bool
	// problemFile is the file a problem names, given the file its line is
	// in: a one-file project's problems name only the line.
	problemFile(file string) string

	// refresh brings the index to the files unless the import state last
	// still describes them.
	refresh(ctx context.Context, w *workspace, last string) (Imported, error)
	// holds reports whether the import state still describes the files,
	// reading none of them; memories is the stat of the one file.
	holds(w *workspace, state string, memories os.FileInfo) bool
	// rewrite applies edit to every memory and rewrites the files and the
	// index; the caller holds the lock.
	rewrite(ctx context.Context, w *workspace, edit func([]memory.Memory) ([]memory.Memory, error)) (memory.ReplaceStats, error)

	// add, remove and replace write one change in place, touching only
	// the lines it changes. format.ErrNotPatchable sends the caller to
	// rewrite, which is always correct.
	add(ctx context.Context, w *workspace, m memory.Memory) (memory.Added, error)
	remove(ctx context.Context, w *workspace, mems []memory.Memory, now time.Time) error
	replace(ctx context.Context, w *workspace, m memory.Memory) error
}

// layoutOf returns the layout of the project under root.
func layoutOf(root string) (layout, error) {
	split, err := acolytedir.IsSplit(root)
	if err != nil {
		return nil, err
	}
	if split {
		return shards{root: root}, nil
	}
	return oneFile{root: root}, nil
}

// oneFile is the layout of a project that keeps its memories in
// .acolyte/memories.jsonl: its in-place writes are onefile_patch.go, its
// import and rewrite are in workspace.go.
type oneFile struct{ root string }

// shards is the layout of a split project: shards*.go, one file per job
// (reading and writing, in-place writes, import, sync, pre-commit).
type shards struct{ root string }

// addInPlace, removeInPlace and replaceInPlace write one change to the
// checkout's files in place (layout's add, remove and replace). A layout
// that cannot be told gives format.ErrNotPatchable, sending the caller to
// change, which says why.
func (w *workspace) addInPlace(ctx context.Context, m memory.Memory) (memory.Added, error) {
	l, err := layoutOf(w.Repo.Root)
	if err != nil {
		return memory.Added{}, format.ErrNotPatchable
	}
	return l.add(ctx, w, m)
}

func (w *workspace) removeInPlace(ctx context.Context, mems []memory.Memory, now time.Time) error {
	l, err := layoutOf(w.Repo.Root)
	if err != nil {
		return format.ErrNotPatchable
	}
	return l.remove(ctx, w, mems, now)
}

func (w *workspace) replaceInPlace(ctx context.Context, m memory.Memory) error {
	l, err := layoutOf(w.Repo.Root)
	if err != nil {
		return format.ErrNotPatchable
	}
	return l.replace(ctx, w, m)
}

// replace rewrites m's line in the memories file.
func (one oneFile) replace(ctx context.Context, w *workspace, m memory.Memory) error {
	return one.patch(ctx, w, map[string][]byte{m.ID: format.Line(m)}, func(data []byte) ([][]byte, error) {
		return format.ReplaceLine(data, m)
	}, func() error {
		_, err := w.store.Put(ctx, m)
		return err
	})
}

// mergeLeftUntidy is false: acolyte's driver merges the one file into its
// canonical form.
func (one oneFile) mergeLeftUntidy() bool { return false }

// mergeLeftUntidy reports whether the inbox holds memories: the side of a
// merge that had not split added them to the one file, which acolyte's
// driver merges as the inbox.
func (s shards) mergeLeftUntidy() bool {
	inbox, err := acolytedir.ReadMemories(s.root)
	return err == nil && len(inbox) > len(format.Encode(nil))
}
