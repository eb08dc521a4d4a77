package gitsync

import (
	"context"

	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
)

// The .acolyte/ directory's files are read and written by package
// acolytedir; these are the parts of it commands use.

// ErrOutside and ErrNotRegular refuse a file in .acolyte/ that is not a
// regular file inside the repository; ErrTooLarge one too large to read.
var (
	ErrOutside    = acolytedir.ErrOutside
	ErrNotRegular = acolytedir.ErrNotRegular
	ErrTooLarge   = acolytedir.ErrTooLarge
)

// ErrLocked means another acolyte process kept the .acolyte lock for longer
// than LockTimeout.
var ErrLocked = acolytedir.ErrLocked

// LockTimeout is how long LockDir waits when ctx has no earlier deadline.
const LockTimeout = acolytedir.LockTimeout

// MaxIndexedMemories is how many project memories the index takes.
const MaxIndexedMemories = acolytedir.MaxIndexedMemories

// FixCommand is the command that brings the project's files to what check
// expects.
const FixCommand = acolytedir.FixCommand

// MergeDriverName is the name the merge driver is registered under in git
// config (merge.<name>.driver) and .gitattributes.
const MergeDriverName = acolytedir.MergeDriverName

// GuardDir refuses a .acolyte/ under root that a symlink leads out of the
// repository, or one of its files that is not a regular file.
func GuardDir(root string) error { return acolytedir.GuardDir(root) }

// LockDir takes the lock every writer of dir, an .acolyte directory, holds.
func LockDir(ctx context.Context, dir string) (unlock func(), err error) {
	return acolytedir.LockDir(ctx, dir)
}

// RemoveStaleTemps removes the temporary files killed writers left in
// root's .acolyte/.
func RemoveStaleTemps(root string) { acolytedir.RemoveStaleTemps(root) }
