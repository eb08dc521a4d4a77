//go:build unix

package sqlite

import (
	"os"

	"golang.org/x/sys/unix"
)

// canWrite asks whether this process may write path.
func canWrite(path string) error {
	if err := unix.Access(path, unix.W_OK); err != nil {
		return &os.PathError{Op: "access", Path: path, Err: err}
	}
	return nil
}
