// Package wordvec defines the binary file that holds the static embedder's
// quantised word vectors. The generator writes it and the embedder reads it
// in place from the bytes compiled into the binary, so the layout is chosen
// to need no parsing: fixed-size tables addressed by index and a
// byte-sorted word blob searched with binary search.
//
// Layout (all integers little-endian):
//
//	magic     [8]byte  "acowvec2"
//	dim       uint32
//	count     uint32   words in this file
//	sourceN   uint32   words in the source vocabulary (for the Zipf estimate)
//	nameLen   uint32
//	name      [nameLen]byte, padded with zeros to a multiple of 4
//	offsets   [count+1]uint32       word i is blob[offsets[i]:offsets[i+1]]
//	ranks     [count]uint32         frequency rank in the source (0 = most frequent)
//	scales    [count]float32        vector i ≈ scales[i] * quant[i]
//	quant     [count*dim]int8
//	blob      the words, sorted bytewise, concatenated
package wordvec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
)

const magic = "acowvec2"

// SIFParam is the a in the SIF weight a/(a+p(w)) (Arora et al., 2017). The
// paper found 1e-3 to 1e-4 work across tasks; we take its default.
const SIFParam = 1e-3

// Weight is the SIF weight of the word with the given 0-based frequency
// rank, in a source vocabulary of sourceN words. GloVe stores no counts but
// is ordered by frequency, so p(w) comes from Zipf's law: p(r) = 1/((r+1)·H)
// with H the harmonic number of sourceN.
func Weight(rank, sourceN int) float32 {
	h := math.Log(float64(sourceN)) + 0.5772156649 // harmonic number
	p := 1 / (float64(rank+1) * h)
	return float32(SIFParam / (SIFParam + p))
}

// Word is one entry given to Write.
type Word struct {
	Text   string
	Rank   int
	Vector []float32
}

// Write encodes the words, sorted by text, into w. Every vector must have
// dim elements.
func Write(w io.Writer, name string, dim, sourceN int, words []Word) error {
	if dim <= 0 {
		return fmt.Errorf("dimension %d is not positive", dim)
	}
	sorted := make([]Word, len(words))
	copy(sorted, words)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Text < sorted[j].Text })
	for i, wd := range sorted {
		if len(wd.Vector) != dim {
			return fmt.Errorf("word %q has %d dimensions, want %d", wd.Text, len(wd.Vector), dim)
		}
		if i > 0 && sorted[i-1].Text == wd.Text {
			return fmt.Errorf("word %q appears twice", wd.Text)
		}
	}

	var buf bytes.Buffer
	put := func(v any) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	buf.WriteString(magic)
	put(uint32(dim))
	put(uint32(len(sorted)))
	put(uint32(sourceN))
	put(uint32(len(name)))
	buf.WriteString(name)
	buf.Write(make([]byte, pad4(len(name))-len(name)))

	off := uint32(0)
	put(off)
	for _, wd := range sorted {
		off += uint32(len(wd.Text))
		put(off)
	}
	for _, wd := range sorted {
		put(uint32(wd.Rank))
	}
	quant := make([]int8, 0, len(sorted)*dim)
	scales := make([]float32, len(sorted))
	for i, wd := range sorted {
		q, scale := quantise(wd.Vector)
		scales[i] = scale
		quant = append(quant, q...)
	}
	put(scales)
	put(quant)
	for _, wd := range sorted {
		buf.WriteString(wd.Text)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// quantise maps v to int8 with one scale per vector, so each word keeps
// its full precision range whatever its norm.
func quantise(v []float32) ([]int8, float32) {
	var max float32
	for _, x := range v {
		max = float32(math.Max(float64(max), math.Abs(float64(x))))
	}
	q := make([]int8, len(v))
	if max == 0 {
		return q, 0
	}
	scale := max / 127
	for i, x := range v {
		q[i] = int8(math.Round(float64(x / scale)))
	}
	return q, scale
}

func pad4(n int) int { return (n + 3) &^ 3 }

// Table reads a file written by Write without copying it.
type Table struct {
	Name    string
	Dim     int
	SourceN int

	count int
	// The tables are strings sharing data's memory: converting them to
	// []byte would copy megabytes on every start.
	offsets string
	ranks   string
	scales  string
	quant   string
	blob    string
}

// ErrCorrupt reports a file that does not have the layout above.
var ErrCorrupt = errors.New("word vector file is corrupt")

// Open checks the header and slices data into its tables. data must not
// change afterwards.
func Open(data string) (*Table, error) {
	if len(data) < 24 || data[:8] != magic {
		return nil, fmt.Errorf("%w: bad magic (regenerate it with go generate)", ErrCorrupt)
	}
	u32 := func(at int) int { return int(le32(data, at)) }
	t := &Table{Dim: u32(8), count: u32(12), SourceN: u32(16)}
	nameLen := u32(20)
	at := 24
	need := at + pad4(nameLen) + 4*(t.count+1) + 4*t.count*2 + t.count*t.Dim
	if t.Dim == 0 || need > len(data) {
		return nil, fmt.Errorf("%w: %d bytes, header promises at least %d", ErrCorrupt, len(data), need)
	}
	t.Name = data[at : at+nameLen]
	at += pad4(nameLen)
	take := func(n int) string {
		b := data[at : at+n]
		at += n
		return b
	}
	t.offsets = take(4 * (t.count + 1))
	t.ranks = take(4 * t.count)
	t.scales = take(4 * t.count)
	t.quant = take(t.count * t.Dim)
	t.blob = data[at:]
	if t.offset(t.count) != len(t.blob) {
		return nil, fmt.Errorf("%w: word blob has %d bytes, offsets say %d", ErrCorrupt, len(t.blob), t.offset(t.count))
	}
	return t, nil
}

// Len is the number of words.
func (t *Table) Len() int { return t.count }

func (t *Table) offset(i int) int { return int(le32(t.offsets, 4*i)) }

// Word returns the text of word i.
func (t *Table) Word(i int) string { return t.blob[t.offset(i):t.offset(i+1)] }

// Find returns the index of word, or -1.
func (t *Table) Find(word string) int {
	i := sort.Search(t.count, func(i int) bool { return t.Word(i) >= word })
	if i < t.count && t.Word(i) == word {
		return i
	}
	return -1
}

// Rank returns the frequency rank of word i in the source vocabulary.
func (t *Table) Rank(i int) int { return int(le32(t.ranks, 4*i)) }

// Scale returns the factor that turns Quant(i) back into the vector.
func (t *Table) Scale(i int) float32 {
	return math.Float32frombits(le32(t.scales, 4*i))
}

// Quant returns the quantised vector of word i; each byte is an int8.
func (t *Table) Quant(i int) string { return t.quant[i*t.Dim : (i+1)*t.Dim] }

// AddTo adds weight times the vector of word i to sum.
func (t *Table) AddTo(sum []float32, i int, weight float32) {
	f := weight * t.Scale(i)
	q := t.Quant(i)
	for d := range len(q) {
		sum[d] += f * float32(int8(q[d]))
	}
}

func le32(s string, at int) uint32 {
	return uint32(s[at]) | uint32(s[at+1])<<8 | uint32(s[at+2])<<16 | uint32(s[at+3])<<24
}
