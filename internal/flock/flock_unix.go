//go:build unix

package flock

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes f's exclusive lock if no one holds it, and reports whether
// it did.
func TryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
