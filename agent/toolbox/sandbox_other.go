//go:build !unix

package toolbox

// openNonblock is zero where opening a file cannot block on a FIFO.
const openNonblock = 0
