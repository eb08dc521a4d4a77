package acolytedir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/atomicfile"
)

// ErrLocked means another acolyte process kept the .acolyte lock for longer
// than LockTimeout.
var ErrLocked = errors.New("project memories are locked by another acolyte process")

// LockTimeout is how long LockDir waits when ctx has no earlier deadline.
// Writers hold the lock for milliseconds, so waiting longer means something
// is stuck.
const LockTimeout = 10 * time.Second

// staleTempAge is how old a temporary file in .acolyte/ must be before it is
// removed although its writer may be alive (RemoveStale removes the files
// of writers that exited at once). A write finishes in milliseconds, so an
// hour-old one was left by a process killed mid-write; the margin covers
// writers that take no lock (EnsureAttributes, the merge driver), a reused
// process id and clocks that disagree.
const staleTempAge = time.Hour

// LockDir takes the exclusive lock that every writer of dir (an .acolyte
// directory) holds while it reads, changes and writes the files there. The
// lock is an advisory lock on dir/.lock, which the operating system releases
// when the process dies, so a crash never leaves a stale lock behind.
//
// dir's parent is the repository root: a dir that a symlink leads out of it
// is refused (GuardDir) before anything is created there.
func LockDir(ctx context.Context, dir string) (unlock func(), err error) {
	if err := GuardDir(filepath.Dir(dir)); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening lock %s: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, LockTimeout)
	defer cancel()
	if err := waitLock(ctx, f); err != nil {
		f.Close()
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w (%s): another acolyte command is still writing; wait for it to finish or stop it, then retry", ErrLocked, path)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	// Holding the lock, no writer of the files it guards is mid-write; the
	// rest go by their writer's liveness.
	atomicfile.RemoveStale(dir, 0, format.MemoriesFile, format.ForgottenFile)
	atomicfile.RemoveStale(dir, staleTempAge)
	return func() {
		unlockFile(f)
		f.Close()
	}, nil
}
