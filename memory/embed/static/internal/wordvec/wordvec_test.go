package wordvec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
)

func write(t *testing.T, words []Word) *Table {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, Header{Name: "test-3d", Dim: 3, SourceN: 1000, Neighbours: 2}, words); err != nil {
		t.Fatal(err)
	}
	tb, err := Open(buf.String())
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestRoundTrip(t *testing.T) {
	words := []Word{
		{Text: "zebra", Rank: 7, Vector: []float32{0.5, -1, 0.25}},
		{Text: "apple", Rank: 2, Vector: []float32{2, 0, -2}},
		{Text: "café", Rank: 0, Vector: []float32{0, 0, 0}},
		{Text: "mango", Rank: 3, Vector: []float32{-0.1, 0.3, 0.2}},
	}
	tb := write(t, words)
	if tb.Name != "test-3d" || tb.Dim != 3 || tb.SourceN != 1000 || tb.Len() != 4 {
		t.Fatalf("header = %q %d %d %d", tb.Name, tb.Dim, tb.SourceN, tb.Len())
	}
	for _, w := range words {
		i := tb.Find(w.Text)
		if i < 0 {
			t.Fatalf("Find(%q) = -1", w.Text)
		}
		if tb.Word(i) != w.Text || tb.Rank(i) != w.Rank {
			t.Errorf("entry %d = %q rank %d, want %q rank %d", i, tb.Word(i), tb.Rank(i), w.Text, w.Rank)
		}
		got := make([]float32, 3)
		tb.AddTo(got, i, 2)
		for d, x := range w.Vector {
			// int8 with a per-vector scale loses at most half a step, 1/254 of the largest component.
			if math.Abs(float64(got[d]-2*x)) > float64(2*maxAbs(w.Vector)/254)+1e-6 {
				t.Errorf("%s[%d] = %v, want about %v", w.Text, d, got[d]/2, x)
			}
		}
	}
	for _, missing := range []string{"", "appl", "apples", "zzz", "a"} {
		if i := tb.Find(missing); i != -1 {
			t.Errorf("Find(%q) = %d, want -1", missing, i)
		}
	}
}

func TestNeighbours(t *testing.T) {
	tb := write(t, []Word{
		{Text: "a", Vector: []float32{1, 0, 0}},
		{Text: "b", Vector: []float32{1, 1, 0}},
		{Text: "c", Vector: []float32{-3, 0, 0}},
		{Text: "d", Vector: []float32{0, 0, 0}}, // no direction: nobody's neighbour
		{Text: "e", Vector: []float32{2, 0.1, 0}},
	})
	want := map[string][]string{
		"a": {"e", "b"},
		"b": {"e", "a"},
		"c": {"b", "e"}, // points away from all; the least opposed come first
		"d": nil,
		"e": {"a", "b"},
	}
	for w, ns := range want {
		i := tb.Find(w)
		var got []string
		for n := range tb.Neighbours + 1 {
			if j := tb.Neighbour(i, n); j >= 0 {
				got = append(got, tb.Word(j))
			}
		}
		if !slices.Equal(got, ns) {
			t.Errorf("neighbours of %s = %q, want %q", w, got, ns)
		}
	}
}

// The lists must be the true top k under the documented cosine, skip the
// common words, break ties by index, and not depend on how many
// goroutines computed them: the generated file is committed and must
// regenerate byte for byte.
func TestNeighboursMatchBruteForce(t *testing.T) {
	// More words than a tile, and an odd number, so that the last pair is
	// half empty.
	const count, dim, k, common = 2101, 8, 5, 40
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]Word, count)
	for i := range words {
		v := make([]float32, dim)
		for d := range v {
			v[d] = float32(rng.IntN(5) - 2) // few distinct directions: many exact ties
		}
		words[i] = Word{Text: fmt.Sprintf("w%04d", i), Rank: rng.IntN(count), Vector: v}
	}
	h := Header{Name: "rand", Dim: dim, SourceN: count, Neighbours: k, CommonRanks: common}
	var serial, parallel bytes.Buffer
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if err := Write(&serial, h, words); err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(3)
	if err := Write(&parallel, h, words); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(serial.Bytes(), parallel.Bytes()) {
		t.Fatal("output depends on the number of goroutines")
	}
	tb, err := Open(parallel.String())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < tb.Len(); i += 7 { // a sample: brute force is slow
		want := bruteForce(tb, i, k, common)
		var got []int
		for n := range k {
			if j := tb.Neighbour(i, n); j >= 0 {
				got = append(got, j)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("neighbours of %s = %v, want %v", tb.Word(i), got, want)
		}
	}
}

func bruteForce(tb *Table, i, k, common int) []int {
	type hit struct {
		j   int
		cos float32
	}
	var hits []hit
	for j := range tb.Len() {
		if j == i || tb.Rank(j) < common || tb.QNorm(j) == 0 || tb.QNorm(i) == 0 {
			continue
		}
		var dot int32
		for d := range tb.Dim {
			dot += int32(int8(tb.Quant(i)[d])) * int32(int8(tb.Quant(j)[d]))
		}
		hits = append(hits, hit{j, float32(dot) / (tb.QNorm(i) * tb.QNorm(j))})
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].cos > hits[b].cos })
	var out []int
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.j)
	}
	return out
}

func TestWriteRejectsBadInput(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, Header{Name: "x", Dim: 2, SourceN: 10}, []Word{{Text: "a", Vector: []float32{1, 2, 3}}})
	if err == nil || !strings.Contains(err.Error(), "3 dimensions") {
		t.Errorf("wrong dimension: err = %v", err)
	}
	err = Write(&buf, Header{Name: "x", Dim: 1, SourceN: 10}, []Word{{Text: "a", Vector: []float32{1}}, {Text: "a", Vector: []float32{2}}})
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate word: err = %v", err)
	}
	many := make([]Word, 70000)
	for i := range many {
		many[i] = Word{Text: fmt.Sprint(i), Vector: []float32{1}}
	}
	err = Write(&buf, Header{Name: "x", Dim: 1, SourceN: 10, Neighbours: 1}, many)
	if err == nil || !strings.Contains(err.Error(), "keep fewer than 65535") {
		t.Errorf("too many words for uint16 neighbours: err = %v", err)
	}
}

func TestOpenRejectsCorruptData(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, Header{Name: "x", Dim: 2, SourceN: 10, Neighbours: 3}, []Word{{Text: "hello", Vector: []float32{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	for name, data := range map[string]string{
		"empty":     "",
		"bad magic": "notmagic" + good[8:],
		"truncated": good[:len(good)-3],
		"extra":     good + "x",
	} {
		if _, err := Open(data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
}

func TestWeightFallsWithFrequency(t *testing.T) {
	prev := float32(0)
	for _, rank := range []int{0, 10, 100, 1000, 10000, 100000} {
		w := Weight(rank, 400000)
		if w <= prev || w > 1 {
			t.Errorf("Weight(%d) = %v, want above %v and at most 1", rank, w, prev)
		}
		prev = w
	}
}

func maxAbs(v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	return m
}

// BenchmarkNeighbours5k lists neighbours for 5,000 random 100-dimensional
// words, 1/100 of the pairs of the shipped 50,000.
func BenchmarkNeighbours5k(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]Word, 5000)
	for i := range words {
		v := make([]float32, 100)
		for d := range v {
			v[d] = float32(rng.NormFloat64())
		}
		words[i] = Word{Text: fmt.Sprintf("w%04d", i), Rank: i, Vector: v}
	}
	h := Header{Name: "bench", Dim: 100, SourceN: 5000, Neighbours: 8, CommonRanks: 100}
	for b.Loop() {
		if err := Write(io.Discard, h, words); err != nil {
			b.Fatal(err)
		}
	}
}
