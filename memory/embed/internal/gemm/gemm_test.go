package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randomMatrix(rng *rand.Rand, n int, spread float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * spread)
	}
	return v
}

// TestMulMatchesDequantisedProduct holds Mul, whichever kernel runs, to a
// float64 product of the dequantised weights, on shapes of the encoder's
// and on ones that leave a single panel or a single row block.
func TestMulMatchesDequantisedProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct{ m, k, n int }{{4, 1, 16}, {4, 384, 16}, {8, 384, 384}, {20, 384, 384}, {32, 384, 1536}, {12, 1536, 384}} {
		w, err := Quantize(randomMatrix(rng, s.k*s.n, 0.05), s.k, s.n)
		if err != nil {
			t.Fatal(err)
		}
		x := randomMatrix(rng, s.m*s.k, 1)
		bias := randomMatrix(rng, s.n, 0.1)
		y := make([]float32, s.m*s.n)
		Mul(y, x, s.m, w, bias)
		for i := range s.m {
			for j := range s.n {
				want := float64(bias[j])
				var mag float64
				for r := range s.k {
					p := float64(x[i*s.k+r]) * float64(w.At(r, j))
					want += p
					mag += math.Abs(p)
				}
				// float32 accumulation of k products: a few ulps of the
				// magnitude summed.
				if got := float64(y[i*s.n+j]); math.Abs(got-want) > 1e-5*mag+1e-6 {
					t.Fatalf("%d×%d·%d×%d: y[%d][%d] = %g, want %g", s.m, s.k, s.k, s.n, i, j, got, want)
				}
			}
		}
	}
}

// TestKernelsAgree: the kernel this machine runs gives the plain Go
// kernel's outputs within a relative 1e-5, the tolerance the encoder's
// vectors inherit on every GOARCH. The depths cover no rows, the
// assembly's leftovers after whole groups of four, and the encoder's own;
// the weights span all of int8, -128 included, which Quantize never makes;
// the output rows are wider than the tile, whose neighbours must survive.
func TestKernelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	depths := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 383, 384, 385, 1536}
	for range 20 {
		depths = append(depths, 1+rng.IntN(800))
	}
	const ldy = 3 * Panel
	const sentinel = -12345
	var differ, outputs int
	for i, k := range depths {
		rows := Rows * (1 + i%(tileRows/Rows)) // every tile height
		panel := make([]int8, k*Panel)
		for i := range panel {
			panel[i] = int8(rng.IntN(256) - 128)
		}
		scale := randomMatrix(rng, Panel, 0.01)
		x := randomMatrix(rng, rows*k, 1)
		bias := randomMatrix(rng, Panel, 0.1)
		got := make([]float32, rows*ldy)
		want := make([]float32, rows*ldy)
		for i := range got {
			got[i], want[i] = sentinel, sentinel
		}
		kernel(k, rows, x, panel, scale, bias, got[Panel:], ldy)
		kernelRows(k, rows, x, panel, scale, bias, want[Panel:], ldy)
		for i := range got {
			row, col := i/ldy, i%ldy-Panel
			if col < 0 || col >= Panel {
				if got[i] != sentinel {
					t.Fatalf("k=%d, %d rows: wrote %g at %d, outside the tile", k, rows, got[i], i)
				}
				continue
			}
			var mag float64
			for r := range k {
				mag += math.Abs(float64(x[row*k+r]) * float64(panel[r*Panel+col]) * float64(scale[col]))
			}
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*mag+1e-6 {
				t.Fatalf("k=%d, %d rows: output [%d][%d] is %g, plain Go gives %g", k, rows, row, col, got[i], want[i])
			}
			outputs++
			if got[i] != want[i] {
				differ++
			}
		}
	}
	// Fused or not, the rounding is the only difference allowed; where
	// the compiler fuses kernelGo's multiply-adds too (arm64), none is
	// expected, but the contract is the tolerance above.
	t.Logf("%d of %d outputs differ from plain Go in the last bits", differ, outputs)
}

// TestQuantizeKeepsEachColumnWithinHalfAStep: every weight comes back
// within half of its column's quantisation step, and a zero column stays
// zero.
func TestQuantizeKeepsEachColumnWithinHalfAStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	k, n := 50, 32
	w := randomMatrix(rng, k*n, 1)
	for r := range k {
		w[r*n+3] = 0
	}
	q, err := Quantize(w, k, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Check(); err != nil {
		t.Fatal(err)
	}
	for r := range k {
		for c := range n {
			if d := math.Abs(float64(q.At(r, c) - w[r*n+c])); d > float64(q.Scale[c])/2+1e-7 {
				t.Fatalf("w[%d][%d] = %g comes back as %g (step %g)", r, c, w[r*n+c], q.At(r, c), q.Scale[c])
			}
		}
	}
	if q.Scale[3] != 0 || q.At(7, 3) != 0 {
		t.Fatalf("zero column came back as scale %g", q.Scale[3])
	}
	if _, err := Quantize(w, k, 20); err == nil {
		t.Fatal("Quantize accepted 20 columns, not a multiple of the panel")
	}
}

// BenchmarkMul runs the encoder's largest product on a short text (a
// query) and a memory-sized one; GFLOP/s is what the kernels are judged by.
func BenchmarkMul(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range []struct {
		name    string
		m, k, n int
	}{{"query12x384x1536", 12, 384, 1536}, {"memory32x384x1536", 32, 384, 1536}, {"memory32x1536x384", 32, 1536, 384}} {
		w, _ := Quantize(randomMatrix(rng, s.k*s.n, 0.05), s.k, s.n)
		x := randomMatrix(rng, s.m*s.k, 1)
		bias := make([]float32, s.n)
		y := make([]float32, s.m*s.n)
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				Mul(y, x, s.m, w, bias)
			}
			b.ReportMetric(2*float64(s.m*s.k*s.n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
