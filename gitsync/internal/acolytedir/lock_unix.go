//go:build unix

package acolytedir

import (
	"context"
	"errors"
	"os"
	"syscall"

	"github.com/acolyte-dev/acolyte/internal/flock"
)

func tryLock(f *os.File) (bool, error) { return flock.TryLock(f) }

// waitLock blocks in the kernel until f's lock is free, so waiters are woken
// when it is released rather than finding it on their next poll, and no
// waiter starves behind luckier pollers. The blocking call cannot be
// interrupted, so it runs on a duplicate of f's descriptor: a flock
// belongs to the open file, which both descriptors share, and if ctx ends
// first, the lock the call may still take is dropped as soon as it is.
func waitLock(ctx context.Context, f *os.File) error {
	if locked, err := tryLock(f); err != nil || locked {
		return err
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		for {
			err := syscall.Flock(fd, syscall.LOCK_EX)
			if !errors.Is(err, syscall.EINTR) {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		syscall.Close(fd) // the lock stays with f's open file
		return err
	case <-ctx.Done():
		go func() {
			if err := <-done; err == nil {
				syscall.Flock(fd, syscall.LOCK_UN)
			}
			syscall.Close(fd)
		}()
		return ctx.Err()
	}
}

func unlockFile(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
