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
// vectors inherit on every GOARCH.
func TestKernelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{1, 2, 7, 384, 1536} {
		for rows := Rows; rows <= tileRows; rows += Rows {
			w, _ := Quantize(randomMatrix(rng, k*Panel, 0.05), k, Panel)
			x := randomMatrix(rng, rows*k, 1)
			bias := randomMatrix(rng, Panel, 0.1)
			got := make([]float32, rows*Panel)
			want := make([]float32, rows*Panel)
			kernel(k, rows, x, w.Data, w.Scale, bias, got, Panel)
			kernelRows(k, rows, x, w.Data, w.Scale, bias, want, Panel)
			for i := range got {
				var mag float64
				for r := range k {
					mag += math.Abs(float64(x[(i/Panel)*k+r]) * float64(w.At(r, i%Panel)))
				}
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*mag+1e-6 {
					t.Fatalf("k=%d, %d rows: output %d is %g, plain Go gives %g", k, rows, i, got[i], want[i])
				}
			}
		}
	}
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
