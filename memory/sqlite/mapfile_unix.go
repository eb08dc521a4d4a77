//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps the file at path read-only. The catalog files it serves are
// replaced by rename and never written in place, so the mapping cannot
// change under its reader.
func mapFile(path string) (data []byte, unmap func(), err error) {
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
