package wordvec

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// noNeighbour pads a neighbour list that has fewer than k entries. It is
// why a file with neighbours holds at most 65,535 words.
const noNeighbour = 0xFFFF

// nearest lists, for every word, the k other words with the highest cosine
// between their quantised vectors, nearest first, ties going to the lower
// index. Only words marked eligible are listed. The result holds k indices
// per word.
//
// It compares every pair once, count²/2 × dim multiply-adds (1.25·10¹¹ for
// the shipped 50,000 words), so the loops are arranged for speed: two
// words' components share one multiply (see pack), rows go in blocks and
// candidates in tiles that stay in cache, and there is one goroutine per
// CPU, each keeping its own lists for every word. Which goroutine saw which
// pair depends on scheduling, but the best k under a total order do not,
// so merging the lists gives the same output every time.
func nearest(quant []int8, qnorms []float32, eligible []bool, dim, k int) []uint16 {
	count := len(qnorms)
	out := make([]uint16, count*k)
	for n := range out {
		out[n] = noNeighbour
	}
	if k == 0 {
		return out
	}
	pairs := pack(quant, dim)
	workers := make([][]topK, runtime.GOMAXPROCS(0))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		lists := make([]topK, count)
		for i := range lists {
			lists[i] = make(topK, 0, k)
		}
		workers[w] = lists
		wg.Go(func() { comparePairs(lists, &next, quant, pairs, qnorms, eligible) })
	}
	wg.Wait()
	merged := make(topK, 0, k)
	for i := range count {
		merged = merged[:0]
		for _, lists := range workers {
			for _, c := range lists[i] {
				merged.offer(c)
			}
		}
		for n, c := range merged {
			out[i*k+n] = uint16(c.index)
		}
	}
	return out
}

// pack interleaves words 2m and 2m+1 into one int64 per component, the
// first in the low 32 bits and the second above, so that multiplying by a
// row component multiplies both. A dot product of int8 vectors, at most
// dim·128², fits in an int32, so the two sums never mix (see unpack).
func pack(quant []int8, dim int) []int64 {
	count := len(quant) / dim
	pairs := make([]int64, (count+1)/2*dim)
	for j := range count {
		m, shift := j/2, 32*(j%2)
		for d := range dim {
			pairs[m*dim+d] += int64(quant[j*dim+d]) << shift
		}
	}
	return pairs
}

// unpack splits a sum over packed components into the two dot products.
func unpack(s int64) (low, high int32) {
	low = int32(s)
	return low, int32((s - int64(low)) >> 32)
}

// comparePairs takes blocks of rows from next until none are left and, for
// each row i in a block, compares it with every word j > i, offering each
// to the other's list.
func comparePairs(lists []topK, next *atomic.Int64, quant []int8, pairs []int64, qnorms []float32, eligible []bool) {
	const rowBlock, colTile = 64, 2048 // both even, so tiles start on a pair
	count := len(lists)
	dim := len(quant) / max(count, 1)
	row := make([]int64, dim)
	offer := func(i, j int, dot int32) {
		if j <= i || j >= count || qnorms[j] == 0 {
			return
		}
		cos := cosine(dot, qnorms[i], qnorms[j])
		if eligible[j] {
			lists[i].offer(candidate{cos, int32(j)})
		}
		if eligible[i] {
			lists[j].offer(candidate{cos, int32(i)})
		}
	}
	offerPair := func(i, m int, s int64) {
		low, high := unpack(s)
		offer(i, 2*m, low)
		offer(i, 2*m+1, high)
	}
	for {
		first := int(next.Add(rowBlock)) - rowBlock
		if first >= count {
			return
		}
		last := min(first+rowBlock, count)
		for tile := first; tile < count; tile += colTile {
			end := min(tile+colTile, count)
			for i := first; i < min(last, end); i++ {
				if qnorms[i] == 0 {
					continue // no direction, so no neighbours and nobody's neighbour
				}
				for d := range row {
					row[d] = int64(quant[i*dim+d])
				}
				m, endPair := max(tile, i+1)/2, (end+1)/2
				for ; m+2 <= endPair; m += 2 {
					s0, s1 := dot2(row, pairs[m*dim:], pairs[(m+1)*dim:])
					offerPair(i, m, s0)
					offerPair(i, m+1, s1)
				}
				if m < endPair {
					s, _ := dot2(row, pairs[m*dim:], pairs[m*dim:])
					offerPair(i, m, s)
				}
			}
		}
	}
}

// cosine is the one formula for similarity between quantised vectors.
// dot is exact in float32 (|dot| ≤ dim·127² < 2²⁴ for dim ≤ 1040), and the
// product of norms is commutative, so cosine(i, j) == cosine(j, i) bit for
// bit.
func cosine(dot int32, qnormA, qnormB float32) float32 {
	return float32(dot) / (qnormA * qnormB)
}

// dot2 returns the dot products of a with the first len(a) elements of
// p0 and p1: four words' products for three loads and two multiplies.
func dot2(a, p0, p1 []int64) (s0, s1 int64) {
	p0, p1 = p0[:len(a)], p1[:len(a)]
	for d, x := range a {
		s0 += x * p0[d]
		s1 += x * p1[d]
	}
	return s0, s1
}

type candidate struct {
	cos   float32
	index int32
}

// nearer orders candidates: higher cosine first, then lower index.
func (c candidate) nearer(than candidate) bool {
	return c.cos > than.cos || c.cos == than.cos && c.index < than.index
}

// topK holds the nearest candidates offered so far, nearest first, up to
// its capacity, whatever order they come in.
type topK []candidate

func (t *topK) offer(c candidate) {
	s := *t
	if len(s) == cap(s) {
		if !c.nearer(s[len(s)-1]) {
			return
		}
		s = s[:len(s)-1]
	}
	at := len(s)
	for at > 0 && c.nearer(s[at-1]) {
		at--
	}
	s = append(s, candidate{})
	copy(s[at+1:], s[at:])
	s[at] = c
	*t = s
}
