package beneath

import (
	"errors"
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// fastDir is the directory open for openat2 (Linux 5.6 and later),
// which resolves a whole path in one call and refuses any step out of
// the directory (RESOLVE_BENEATH), /proc's magic links included. A
// kernel or sandbox without openat2 leaves every name to os.Root.
type fastDir struct {
	fd      int
	missing *atomic.Bool // openat2 is not there: every name falls back
}

func openFast(dir string) (fastDir, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fastDir{fd: -1}, err
	}
	return fastDir{fd: fd, missing: new(atomic.Bool)}, nil
}

func (d fastDir) close() error {
	if d.fd < 0 {
		return nil
	}
	return unix.Close(d.fd)
}

func (d fastDir) open(name string, statOnly bool) (*os.File, error) {
	if d.missing.Load() {
		return nil, errFallBack
	}
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	if statOnly {
		how.Flags = unix.O_PATH | unix.O_CLOEXEC
	}
	for {
		fd, err := unix.Openat2(d.fd, name, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), name), nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ENOENT):
			return nil, &fs.PathError{Op: "openat2", Path: name, Err: err}
		case errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EPERM):
			// No openat2, or a sandbox (seccomp) refusing it.
			d.missing.Store(true)
		}
		// EXDEV (a step out), ELOOP, EAGAIN (a rename raced), EACCES:
		// os.Root answers, in its own words.
		return nil, errFallBack
	}
}
