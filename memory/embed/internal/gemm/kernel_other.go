//go:build !amd64 && !arm64

package gemm

func kernel(k, rows int, x []float32, panel []int8, scale, bias, y []float32, ldy int) {
	kernelRows(k, rows, x, panel, scale, bias, y, ldy)
}
