// Package gemm multiplies activations by int8 weight matrices: the one
// operation that costs anything in a small transformer's forward pass.
//
// Weights are quantised to int8 with one scale per output column and kept
// in panels of Panel columns, so a kernel streams each panel's bytes in
// order and widens them to float32 in registers: the matrix stays a
// quarter of its float32 size in the binary and in memory, and nothing is
// unpacked when a process starts. Activations stay float32.
//
// On amd64 kernels written in assembly compute a tile of Panel columns by
// up to twelve rows with AVX-512, or by Rows rows with AVX2 and FMA; the
// two give the same bits. On every arm64 a NEON kernel computes Rows rows.
// Elsewhere a plain Go loop computes the same sums in the same order,
// differing only in rounding (fused or not), which TestKernelsAgree bounds.
package gemm

import (
	"fmt"
	"runtime"
	"sync"
)

const (
	// Panel is the number of columns a panel holds.
	Panel = 16
	// Rows is the number of activation rows the smallest kernel computes;
	// callers hold activations in buffers of a multiple of Rows rows.
	Rows = 4
	// tileRows is the most rows one kernel call computes: a kernel
	// widens each weight once for all of them, so a short product (a
	// query's) streams its weights once.
	tileRows = 3 * Rows
)

// Q8 is a k×n weight matrix quantised to int8 with one scale per column.
// Data holds n/Panel panels one after the other, each k rows of Panel
// int8s: w[r][c] is Data[(c/Panel)*k*Panel + r*Panel + c%Panel] * Scale[c].
type Q8 struct {
	K, N  int
	Data  []int8
	Scale []float32
}

// Quantize packs a k×n row-major float32 matrix, choosing each column's
// scale so its largest magnitude maps to 127.
func Quantize(w []float32, k, n int) (*Q8, error) {
	if n%Panel != 0 || len(w) != k*n {
		return nil, fmt.Errorf("gemm: cannot pack %d values as %d×%d in panels of %d", len(w), k, n, Panel)
	}
	q := &Q8{K: k, N: n, Data: make([]int8, k*n), Scale: make([]float32, n)}
	for c := range n {
		var peak float32
		for r := range k {
			peak = max(peak, abs(w[r*n+c]))
		}
		if peak == 0 {
			continue
		}
		q.Scale[c] = peak / 127
		inv := 127 / peak
		for r := range k {
			q.Data[q.index(r, c)] = int8(round(w[r*n+c] * inv))
		}
	}
	return q, nil
}

func (q *Q8) index(r, c int) int { return (c/Panel)*q.K*Panel + r*Panel + c%Panel }

// At is the dequantised weight at row r, column c.
func (q *Q8) At(r, c int) float32 { return float32(q.Data[q.index(r, c)]) * q.Scale[c] }

// Check reports whether the matrix's slices are as long as its shape says,
// so a kernel never reads past them.
func (q *Q8) Check() error {
	if q.N%Panel != 0 || len(q.Data) != q.K*q.N || len(q.Scale) != q.N {
		return fmt.Errorf("gemm: %d×%d matrix holds %d weights and %d scales", q.K, q.N, len(q.Data), len(q.Scale))
	}
	return nil
}

// parallelWork is the fewest multiply-adds worth a second goroutine: below
// it, starting one costs more than it saves.
const parallelWork = 1 << 18

// Mul sets y = x·w + bias for the m rows of x (m×K, row-major) into y
// (m×N, row-major). m must be a multiple of Rows; bias has N values.
// Columns are shared out among the processors when the product is large.
func Mul(y, x []float32, m int, w *Q8, bias []float32) {
	if m%Rows != 0 || len(x) < m*w.K || len(y) < m*w.N || len(bias) != w.N {
		panic(fmt.Sprintf("gemm: Mul of %d rows: x %d, y %d, bias %d for %d×%d weights", m, len(x), len(y), len(bias), w.K, w.N))
	}
	panels := w.N / Panel
	workers := min(runtime.GOMAXPROCS(0), panels, max(1, m*w.K*w.N/parallelWork))
	if workers <= 1 {
		mulPanels(y, x, m, w, bias, 0, panels)
		return
	}
	var wg sync.WaitGroup
	for i := range workers {
		lo, hi := panels*i/workers, panels*(i+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			mulPanels(y, x, m, w, bias, lo, hi)
		}()
	}
	wg.Wait()
}

// MulSerial is Mul on the calling goroutine alone, for callers that
// already run products side by side.
func MulSerial(y, x []float32, m int, w *Q8, bias []float32) {
	if m%Rows != 0 || len(x) < m*w.K || len(y) < m*w.N || len(bias) != w.N {
		panic(fmt.Sprintf("gemm: Mul of %d rows: x %d, y %d, bias %d for %d×%d weights", m, len(x), len(y), len(bias), w.K, w.N))
	}
	mulPanels(y, x, m, w, bias, 0, w.N/Panel)
}

// mulPanels computes panels [lo, hi) for every row. Rows vary fastest so
// that one panel, a few kilobytes, stays in the first-level cache while
// every row block reads it.
func mulPanels(y, x []float32, m int, w *Q8, bias []float32, lo, hi int) {
	k, n := w.K, w.N
	for p := lo; p < hi; p++ {
		panel := w.Data[p*k*Panel : (p+1)*k*Panel]
		col := p * Panel
		for r := 0; r < m; {
			rows := min(m-r, tileRows)
			kernel(k, rows, x[r*k:], panel, w.Scale[col:col+Panel], bias[col:col+Panel], y[r*n+col:], n)
			r += rows
		}
	}
}

// kernelRows is kernelGo for rows rows, a multiple of Rows.
func kernelRows(k, rows int, x []float32, panel []int8, scale, bias, y []float32, ldy int) {
	for i := 0; i < rows; i += Rows {
		kernelGo(k, x[i*k:], panel, scale, bias, y[i*ldy:], ldy)
	}
}

// kernelGo sets Rows rows of Panel outputs: y[i*ldy+j] = bias[j] +
// scale[j]·Σ x[i*k+r]·panel[r*Panel+j]. It is the reference the assembly
// kernels are held to.
func kernelGo(k int, x []float32, panel []int8, scale, bias, y []float32, ldy int) {
	var acc [Rows][Panel]float32
	for r := range k {
		w := panel[r*Panel : r*Panel+Panel]
		for i := range Rows {
			xv := x[i*k+r]
			a := &acc[i]
			for j := range Panel {
				a[j] += xv * float32(w[j])
			}
		}
	}
	for i := range Rows {
		out := y[i*ldy : i*ldy+Panel]
		for j := range Panel {
			out[j] = acc[i][j]*scale[j] + bias[j]
		}
	}
}

func abs(f float32) float32 {
	if f < 0 {
		return -f
	}
	return f
}

func round(f float32) float32 {
	if f < 0 {
		return float32(int32(f - 0.5))
	}
	return float32(int32(f + 0.5))
}
