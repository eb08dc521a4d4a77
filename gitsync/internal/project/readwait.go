package project

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/memory"
)

// ReadImportWait bounds how long a command that only reads (search, list)
// waits for the locks an import takes: the .acolyte/ lock and the
// database's write lock. Writers hold them for milliseconds; a command
// that finds them held longer answers from the index as it stands and says
// so, rather than stalling for LockTimeout behind a stuck process.
const ReadImportWait = 500 * time.Millisecond

// writableWaiter is a store that can tell, within a bound, whether another
// process keeps its write lock. The SQLite store is one; a store that is
// not is simply waited for.
type writableWaiter interface {
	WaitWritable(ctx context.Context, wait time.Duration) error
}

type lockWaitKey struct{}

// withLockWait bounds the lock waits of an import run under ctx; only the
// waits: the import itself, once it holds both locks, runs to its end.
func withLockWait(ctx context.Context, wait time.Duration) context.Context {
	return context.WithValue(ctx, lockWaitKey{}, wait)
}

func lockWait(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(lockWaitKey{}).(time.Duration)
	return d, ok
}

// RefreshToRead brings the index up to date for a command that reads it. If
// another process keeps the locks longer than ReadImportWait, the command
// goes on with the index as it stands, with a warning; every other failure
// is returned.
func (w *Workspace) RefreshToRead(ctx context.Context) error {
	_, err := w.Refresh(withLockWait(ctx, ReadImportWait))
	if err == nil || ctx.Err() != nil {
		return err
	}
	if errors.Is(err, acolytedir.ErrLocked) || errors.Is(err, memory.ErrDatabaseLocked) {
		w.Tell([]string{fmt.Sprintf("project memories not re-imported (another acolyte process is writing; the next command catches up), so results come from the index as it was: %v", err)})
		return nil
	}
	return err
}

// WriteIndexWait bounds how long a write that has saved the memories file
// waits for the database before it leaves the index to the next command.
const WriteIndexWait = 2 * time.Second

// indexWritten runs index, which brings the index to path (the memories
// file, just written), and says whether it did. The file is the truth, and
// the next command re-imports it since the recorded hash no longer
// matches, so a database that another process keeps locked fails nothing:
// the write is done, a warning says the index is behind, and indexWritten
// returns false with a nil error. Any other failure is returned, saying
// what was written.
func (w *Workspace) indexWritten(ctx context.Context, path string, index func() error) (bool, error) {
	var err error
	if ww, ok := w.Store.(writableWaiter); ok {
		err = ww.WaitWritable(ctx, WriteIndexWait)
	}
	if err == nil {
		err = index()
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, memory.ErrDatabaseLocked):
		w.Tell([]string{fmt.Sprintf("saved to %s; the search index is behind (%v) and the next command catches up", path, err)})
		return false, nil
	}
	return false, fmt.Errorf("%s was written but the index was not updated (the next command retries): %w", path, err)
}
