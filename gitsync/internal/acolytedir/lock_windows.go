//go:build windows

package acolytedir

import (
	"context"
	"os"
	"time"

	"github.com/acolyte-dev/acolyte/internal/flock"
	"golang.org/x/sys/windows"
)

func tryLock(f *os.File) (bool, error) { return flock.TryLock(f) }

// lockPoll is how often a waiting LockDir retries on Windows, where a
// blocking LockFileEx could not be abandoned when ctx ends.
const lockPoll = 20 * time.Millisecond

// waitLock polls for f's lock until it is taken or ctx ends.
func waitLock(ctx context.Context, f *os.File) error {
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for {
		locked, err := tryLock(f)
		if err != nil || locked {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func unlockFile(f *os.File) {
	var ol windows.Overlapped
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
