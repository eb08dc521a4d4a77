package gemm

import (
	"math/rand/v2"
	"testing"
)

// TestAVX512GivesAVX2sBits: the wide kernel sums in the AVX2 kernel's
// order, so a vector does not depend on which of the two a machine has.
func TestAVX512GivesAVX2sBits(t *testing.T) {
	if !useAVX512 {
		t.Skip("this CPU has no AVX-512")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, k := range []int{1, 3, 384, 1536} {
		for rows := Rows; rows <= tileRows; rows += Rows {
			w, _ := Quantize(randomMatrix(rng, k*Panel, 0.05), k, Panel)
			x := randomMatrix(rng, rows*k, 1)
			bias := randomMatrix(rng, Panel, 0.1)
			wide := make([]float32, rows*Panel)
			narrow := make([]float32, rows*Panel)
			kernelAVX512(k, rows, &x[0], k, &w.Data[0], &w.Scale[0], &bias[0], &wide[0], Panel)
			for i := 0; i < rows; i += Rows {
				kernel4x16AVX2(k, &x[i*k], k, &w.Data[0], &w.Scale[0], &bias[0], &narrow[i*Panel], Panel)
			}
			for i := range wide {
				if wide[i] != narrow[i] {
					t.Fatalf("k=%d, %d rows: output %d is %g with AVX-512, %g with AVX2", k, rows, i, wide[i], narrow[i])
				}
			}
		}
	}
}

// BenchmarkMulAVX2 is BenchmarkMul with the AVX-512 kernels turned off,
// to compare the two in one run.
func BenchmarkMulAVX2(b *testing.B) {
	if !useAVX512 {
		b.Skip("this CPU has no AVX-512")
	}
	useAVX512 = false
	defer func() { useAVX512 = true }()
	BenchmarkMul(b)
}
