package bert

import (
	"math"
	"os"
	"testing"
)

func openCommitted(tb testing.TB) *Model {
	tb.Helper()
	data, err := os.ReadFile("../../minilm.bin")
	if err != nil {
		tb.Fatal(err)
	}
	m, err := Open(string(data))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// BenchmarkEmbed times one text through the encoder: a short query and a
// memory of typical length.
func BenchmarkEmbed(b *testing.B) {
	m := openCommitted(b)
	for _, c := range []struct{ name, text string }{
		{"query", "where do styles live"},
		{"memory", "Write commit messages in the imperative mood, keep the subject under 72 characters and explain why in the body."},
	} {
		ids := m.Tokenize(c.text)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				m.Embed([][]int{ids}, false)
			}
			b.ReportMetric(float64(len(ids)), "tokens")
		})
	}
}

func BenchmarkOpen(b *testing.B) {
	data, err := os.ReadFile("../../minilm.bin")
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	for b.Loop() {
		if _, err := Open(s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGELUMatchesErf holds the approximation to math.Erf's GELU within
// float32 resolution over the range activations take.
func TestGELUMatchesErf(t *testing.T) {
	var xs []float32
	for x := -10.0; x <= 10; x += 0.001 {
		xs = append(xs, float32(x))
	}
	got := append([]float32(nil), xs...)
	gelu(got)
	for i, x := range xs {
		want := 0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2))
		if d := math.Abs(float64(got[i]) - want); d > 2e-6*max(1, math.Abs(want)) {
			t.Fatalf("gelu(%g) = %g, want %g", x, got[i], want)
		}
	}
}

// TestGELUKernelsAgree: the vector kernel and the scalar code that
// finishes its tail give the same values within float32 rounding.
func TestGELUKernelsAgree(t *testing.T) {
	var xs []float32
	for x := -12.0; x <= 12; x += 0.0037 {
		xs = append(xs, float32(x))
	}
	got := append([]float32(nil), xs...)
	if n := geluVector(got); n == 0 {
		t.Skip("no vector kernel on this machine")
	}
	for i, x := range xs {
		want := gelu1(x)
		if d := math.Abs(float64(got[i] - want)); d > 1e-6*max(1, math.Abs(float64(want))) {
			t.Fatalf("gelu(%g): kernel %g, scalar %g", x, got[i], want)
		}
	}
}
