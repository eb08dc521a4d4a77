package wordvec

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

func write(t *testing.T, words []Word) *Table {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, "test-3d", 3, 1000, words); err != nil {
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

func TestWriteRejectsBadInput(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, "x", 2, 10, []Word{{Text: "a", Vector: []float32{1, 2, 3}}})
	if err == nil || !strings.Contains(err.Error(), "3 dimensions") {
		t.Errorf("wrong dimension: err = %v", err)
	}
	err = Write(&buf, "x", 1, 10, []Word{{Text: "a", Vector: []float32{1}}, {Text: "a", Vector: []float32{2}}})
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate word: err = %v", err)
	}
}

func TestOpenRejectsCorruptData(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, "x", 2, 10, []Word{{Text: "hello", Vector: []float32{1, 2}}}); err != nil {
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
