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
// the shipped 50,000 words), so the loops are arranged for speed: rows in
// blocks, candidates in tiles that stay in cache, four candidates per pass
// over a row, and one goroutine per CPU, each keeping its own lists for
// every word. Which goroutine saw which pair depends on scheduling, but the
// best k under a total order do not, so merging the lists gives the same
// output every time.
func nearest(quant []int8, qnorms []float32, eligible []bool, dim, k int) []uint16 {
	count := len(qnorms)
	out := make([]uint16, count*k)
	for n := range out {
		out[n] = noNeighbour
	}
	if k == 0 {
		return out
	}
	workers := make([][]topK, runtime.GOMAXPROCS(0))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		lists := make([]topK, count)
		for i := range lists {
			lists[i] = make(topK, 0, k)
		}
		workers[w] = lists
		wg.Go(func() { comparePairs(lists, &next, quant, qnorms, eligible) })
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

// comparePairs takes blocks of rows from next until none are left and, for
// each row i in a block, compares it with every word j > i, offering each
// to the other's list.
func comparePairs(lists []topK, next *atomic.Int64, quant []int8, qnorms []float32, eligible []bool) {
	const rowBlock, colTile = 64, 2048
	count := len(lists)
	dim := len(quant) / max(count, 1)
	row := make([]int32, dim)
	offer := func(i, j int, dot int32) {
		if qnorms[j] == 0 {
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
					row[d] = int32(quant[i*dim+d])
				}
				j := max(tile, i+1)
				for ; j+4 <= end; j += 4 {
					s0, s1, s2, s3 := dot4(row, quant[j*dim:], quant[(j+1)*dim:], quant[(j+2)*dim:], quant[(j+3)*dim:])
					offer(i, j, s0)
					offer(i, j+1, s1)
					offer(i, j+2, s2)
					offer(i, j+3, s3)
				}
				for ; j < end; j++ {
					s, _, _, _ := dot4(row, quant[j*dim:], quant[j*dim:], quant[j*dim:], quant[j*dim:])
					offer(i, j, s)
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

// dot4 returns the dot products of a with the first len(a) elements of
// each of b0..b3. Reading each a[d] once for four products is most of the
// speed.
func dot4(a []int32, b0, b1, b2, b3 []int8) (s0, s1, s2, s3 int32) {
	b0, b1, b2, b3 = b0[:len(a)], b1[:len(a)], b2[:len(a)], b3[:len(a)]
	for d, x := range a {
		s0 += x * int32(b0[d])
		s1 += x * int32(b1[d])
		s2 += x * int32(b2[d])
		s3 += x * int32(b3[d])
	}
	return
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
