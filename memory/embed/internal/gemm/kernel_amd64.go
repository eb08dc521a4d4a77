package gemm

import "golang.org/x/sys/cpu"

// useAVX2 holds on every x86-64 CPU since 2013–2015.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kernel4x16AVX2 is kernelGo in AVX2: eight accumulators of eight floats
// hold the tile, each weight row is widened from int8 once and used by
// all four rows. ldx and ldy count float32s.
//
//go:noescape
func kernel4x16AVX2(k int, x *float32, ldx int, panel *int8, scale, bias, y *float32, ldy int)

func kernel(k int, x []float32, panel []int8, scale, bias, y []float32, ldy int) {
	if !useAVX2 || k == 0 {
		kernelGo(k, x, panel, scale, bias, y, ldy)
		return
	}
	_ = x[(Rows-1)*k+k-1]
	_ = panel[k*Panel-1]
	_ = y[(Rows-1)*ldy+Panel-1]
	_, _ = scale[Panel-1], bias[Panel-1]
	kernel4x16AVX2(k, &x[0], k, &panel[0], &scale[0], &bias[0], &y[0], ldy)
}
