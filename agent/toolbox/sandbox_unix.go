//go:build unix

package toolbox

import "syscall"

// openNonblock keeps open(2) of a FIFO without a writer from blocking; it
// changes nothing for the regular files the tools go on to read.
const openNonblock = syscall.O_NONBLOCK
