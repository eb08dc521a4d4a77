//go:build !windows

package atomicfile

import "syscall"

// errUnsupportedSync is what fsync of a directory returns where the file
// system cannot do it.
var errUnsupportedSync = syscall.EINVAL
