package sqlite

import (
	"context"
	"fmt"
	"os"

	"github.com/acolyte-dev/acolyte/internal/flock"
	"github.com/acolyte-dev/acolyte/memory"
)

// FillInBackground runs Fill unless another process is already running
// it for this database, as the lock file beside the database says, and
// reports whether it ran. The lock is the kernel's, so a killed filler
// leaves no stale lock, and the vectors it committed stay (Fill commits
// them 64 at a time); the next filler goes on from there.
func (s *Store) FillInBackground(ctx context.Context, progress func(done, total int)) (int, bool, error) {
	f, locked, err := s.lockFill()
	if err != nil || !locked {
		return 0, false, err
	}
	defer f.Close()
	n, err := s.Fill(ctx, progress)
	return n, true, err
}

// Filling reports whether another process holds the fill lock, so that
// a command need not start a filler that would only find it taken.
func (s *Store) Filling() bool {
	f, locked, err := s.lockFill()
	if err != nil {
		return false
	}
	if locked {
		f.Close()
	}
	return !locked
}

// lockFill takes the fill lock beside the database if it is free; the
// caller closes f, which releases it, when locked.
func (s *Store) lockFill() (f *os.File, locked bool, err error) {
	f, err = os.OpenFile(s.path+"-fill.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("%w: open the fill lock beside %s: %w", memory.ErrIO, s.path, err)
	}
	if locked, err = flock.TryLock(f); err != nil || !locked {
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("%w: lock %s: %w", memory.ErrIO, f.Name(), err)
		}
		return nil, false, nil
	}
	return f, true, nil
}

// LeftPending reports whether this Store wrote memories without their
// model vectors, or searched in the instant space because some lacked
// them: then Fill has work to do.
func (s *Store) LeftPending() bool { return s.leftPending.Load() }
