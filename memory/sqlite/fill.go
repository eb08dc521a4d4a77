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
	f, err := os.OpenFile(s.path+"-fill.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, false, fmt.Errorf("%w: open the fill lock beside %s: %w", memory.ErrIO, s.path, err)
	}
	defer f.Close()
	locked, err := flock.TryLock(f)
	if err != nil {
		return 0, false, fmt.Errorf("%w: lock %s: %w", memory.ErrIO, f.Name(), err)
	}
	if !locked {
		return 0, false, nil
	}
	n, err := s.Fill(ctx, progress)
	return n, true, err
}

// LeftPending reports whether this Store wrote memories without their
// model vectors, or searched in the instant space because some lacked
// them: then Fill has work to do.
func (s *Store) LeftPending() bool { return s.leftPending.Load() }
