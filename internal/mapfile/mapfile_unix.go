//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mapfile

import (
	"fmt"
	"os"
	"syscall"
)

// Map maps the file at path read-only; unmap releases it, after which
// nothing may touch data. An empty file cannot be mapped and is an error.
func Map(path string) (data []byte, unmap func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size == 0 || size != int64(int(size)) {
		return nil, nil, fmt.Errorf("map %s: size %d", path, size)
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	return data, func() { syscall.Munmap(data) }, nil
}
