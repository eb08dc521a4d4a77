package gemm

// kernel4x16NEON is kernelGo in NEON: sixteen accumulators of four floats
// hold the tile, each weight row is widened from int8 once and used by all
// four rows. ldx and ldy count float32s. ASIMD is part of every arm64
// CPU, so it needs no feature check.
//
//go:noescape
func kernel4x16NEON(k int, x *float32, ldx int, panel *int8, scale, bias, y *float32, ldy int)

func kernel(k, rows int, x []float32, panel []int8, scale, bias, y []float32, ldy int) {
	if k == 0 {
		// No x or weights to point at; the tile is just the bias.
		kernelRows(k, rows, x, panel, scale, bias, y, ldy)
		return
	}
	_ = x[(rows-1)*k+k-1]
	_ = panel[k*Panel-1]
	_ = y[(rows-1)*ldy+Panel-1]
	_, _ = scale[Panel-1], bias[Panel-1]
	for i := 0; i < rows; i += Rows {
		kernel4x16NEON(k, &x[i*k], k, &panel[0], &scale[0], &bias[0], &y[i*ldy], ldy)
	}
}
