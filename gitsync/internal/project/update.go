package project

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/memory"
)

// Update is the one way to change the memories file: it takes the lock,
// reads the file, lets change compute the new set and writes it back. If
// change fails, the file is left alone. A line that is not a valid memory
// is kept as it is, after the memories (format.EncodeKeeping), so that it
// blocks no write and is not lost. A file that a merge without acolyte's
// driver left with an id on two lines is refused with the line and the
// fix: rewriting it here would drop a line without a word, while `acolyte
// sync` resolves duplicates and says which line it drops.
func Update(ctx context.Context, root string, change func([]memory.Memory) ([]memory.Memory, error)) error {
	unlock, err := acolytedir.LockDir(ctx, filepath.Join(root, format.Dir))
	if err != nil {
		return err
	}
	defer unlock()
	l, err := LayoutOf(root)
	if err != nil {
		return err
	}
	return l.update(change)
}

// update is Update for the one file; the caller holds the lock. A change
// that takes the project past format.SplitAt splits it.
func (one OneFile) update(change func([]memory.Memory) ([]memory.Memory, error)) error {
	root := one.Root
	path := format.MemoriesPath(root)
	data, err := acolytedir.ReadMemories(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading project memories: %w", err)
	}
	d, err := format.DecodeAll(format.Dir+"/"+format.MemoriesFile, data)
	if err != nil {
		return err
	}
	if len(d.Duplicates) > 0 {
		le := d.Duplicates[0]
		return &format.LineError{File: le.File, Line: le.Line, Err: fmt.Errorf("%w: %v; run `%s` first", format.ErrInvalidFile, le.Err, acolytedir.FixCommand)}
	}
	ts, err := acolytedir.ReadTombstones(root)
	if err != nil {
		return err
	}
	if len(ts.Warnings) > 0 {
		return fmt.Errorf("%w: %s", format.ErrInvalidFile, ts.Warnings[0])
	}
	kept, _ := format.Forget(d.Memories, ts.List)
	next, err := change(kept)
	if err != nil {
		return err
	}
	if len(next) > format.SplitAt {
		_, err := writeSplitFiles(root, acolytedir.SplitProject{}, []format.Part{{File: format.MemoriesFile, Decoded: d}}, next)
		return err
	}
	return format.WriteFileKeeping(path, next, d.InvalidLines)
}

// update is Update for a split project; the caller holds the lock.
func (s Shards) update(change func([]memory.Memory) ([]memory.Memory, error)) error {
	root := s.Root
	p, err := acolytedir.ReadSplit(root)
	if err != nil {
		return err
	}
	if len(p.Tombs.Warnings) > 0 {
		return fmt.Errorf("%w: %s", format.ErrInvalidFile, p.Tombs.Warnings[0])
	}
	d, parts, err := p.Decode()
	if err != nil {
		return err
	}
	if len(d.Duplicates) > 0 {
		le := d.Duplicates[0]
		return &format.LineError{File: le.File, Line: le.Line, Err: fmt.Errorf("%w: %v; run `%s` first", format.ErrInvalidFile, le.Err, acolytedir.FixCommand)}
	}
	kept, _ := format.Forget(d.Memories, p.Tombs.List)
	next, err := change(kept)
	if err != nil {
		return err
	}
	_, err = writeSplitFiles(root, p, parts, next)
	return err
}

// EnsureAttributes makes .acolyte/.gitattributes merge memories.jsonl and
// forgotten.jsonl with git's union driver and .acolyte/.gitignore ignore the lock and temporary
// files. Lines already present are kept; missing ones are added.
//
// Union is the tracked fallback because it needs nothing installed: two
// branches that both add memories (which, with time-ordered ids, both
// append at the end of the file) merge cleanly on any clone. Where acolyte
// is installed, the merge driver set in $GIT_DIR/info/attributes takes
// precedence and also resolves edits (see InstallMergeDriver).
func EnsureAttributes(root string) error {
	if err := acolytedir.GuardDir(root); err != nil {
		return err
	}
	dir := filepath.Join(root, format.Dir)
	// Tombstones are a set that only grows but for compaction and reverts,
	// which union merges exactly; no driver is needed for them.
	attrs := []string{format.MemoriesFile + " merge=union", format.ForgottenFile + " merge=union"}
	ignores := []string{"/" + acolytedir.LockFile, "/" + atomicfile.TempPrefix + "*"}
	l, err := LayoutOf(root)
	if err != nil {
		return err
	}
	moreAttrs, moreIgnores := l.attributes()
	attrs, ignores = append(attrs, moreAttrs...), append(ignores, moreIgnores...)
	if err := acolytedir.EnsureLines(filepath.Join(dir, acolytedir.AttributesFile), attrs...); err != nil {
		return err
	}
	return acolytedir.EnsureLines(filepath.Join(dir, acolytedir.IgnoreFile), ignores...)
}
