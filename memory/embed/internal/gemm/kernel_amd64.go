package gemm

import "golang.org/x/sys/cpu"

var (
	// useAVX2 holds on every x86-64 CPU since 2013–2015.
	useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	// useAVX512 holds on Intel server CPUs since 2017 and AMD's since
	// Zen 4; x/sys/cpu also checks that the system saves the registers.
	useAVX512 = useAVX2 && cpu.X86.HasAVX512F
)

// kernel4x16AVX2 is kernelGo in AVX2: eight accumulators of eight floats
// hold the tile, each weight row is widened from int8 once and used by
// all four rows. ldx and ldy count float32s.
//
//go:noescape
func kernel4x16AVX2(k int, x *float32, ldx int, panel *int8, scale, bias, y *float32, ldy int)

// kernelAVX512 is kernelGo for 4, 8 or 12 rows in AVX-512.
//
//go:noescape
func kernelAVX512(k, rows int, x *float32, ldx int, panel *int8, scale, bias, y *float32, ldy int)

func kernel(k, rows int, x []float32, panel []int8, scale, bias, y []float32, ldy int) {
	if !useAVX2 || k == 0 {
		kernelRows(k, rows, x, panel, scale, bias, y, ldy)
		return
	}
	_ = x[(rows-1)*k+k-1]
	_ = panel[k*Panel-1]
	_ = y[(rows-1)*ldy+Panel-1]
	_, _ = scale[Panel-1], bias[Panel-1]
	if useAVX512 && rows > Rows {
		kernelAVX512(k, rows, &x[0], k, &panel[0], &scale[0], &bias[0], &y[0], ldy)
		return
	}
	for i := 0; i < rows; i += Rows {
		kernel4x16AVX2(k, &x[i*k], k, &panel[0], &scale[0], &bias[0], &y[i*ldy], ldy)
	}
}
