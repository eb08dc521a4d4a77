//go:build !amd64 && !arm64

package gemm

func kernel(k int, x []float32, panel []int8, scale, bias, y []float32, ldy int) {
	kernelGo(k, x, panel, scale, bias, y, ldy)
}
