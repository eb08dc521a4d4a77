package bert

import "golang.org/x/sys/cpu"

var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// geluAVX2 applies gelu1 to n values at x, n a multiple of 8.
//
//go:noescape
func geluAVX2(x *float32, n int)

// geluVector applies gelu to the longest prefix of x it can and returns
// its length.
func geluVector(x []float32) int {
	n := len(x) &^ 7
	if !useAVX2 || n == 0 {
		return 0
	}
	geluAVX2(&x[0], n)
	return n
}
