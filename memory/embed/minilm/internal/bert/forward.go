package bert

import (
	"math"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/internal/gemm"
)

// Embed returns the model's sentence vector for each sequence of ids
// (from Tokenize): the mean of the last layer's states, normalised to
// unit length. The sequences run through the linear layers together, one
// after the other in the same rows, each attending only to itself: the
// products grow taller, which the kernels run faster, and a search's
// query and its words cost one pass. With serial, products use only the
// calling goroutine, for callers that run passes side by side.
func (m *Model) Embed(seqs [][]int, serial bool) [][]float32 {
	h := m.Hidden
	s := m.newPass(seqs, serial)
	m.embed(s)
	for i := range m.Layers {
		m.layer(&m.Layers[i], s)
	}
	out := make([][]float32, len(seqs))
	for i, seg := range s.segs {
		v := make([]float32, h)
		for r := seg.start; r < seg.end; r++ {
			for j, x := range s.x[r*h : (r+1)*h] {
				v[j] += x
			}
		}
		memory.Normalize32(v)
		out[i] = v
	}
	return out
}

// segment is one sequence's rows.
type segment struct{ start, end int }

// pass is one forward pass's activations; rows past the last sequence's
// are padding the kernels compute and the pass ignores.
type pass struct {
	ids                  []int
	segs                 []segment
	rows, tokens         int
	serial               bool
	x, qkv, ctx, tmp, up []float32
	scores               []float32
}

func (m *Model) newPass(seqs [][]int, serial bool) *pass {
	s := &pass{serial: serial}
	longest := 0
	for _, ids := range seqs {
		s.segs = append(s.segs, segment{len(s.ids), len(s.ids) + len(ids)})
		s.ids = append(s.ids, ids...)
		longest = max(longest, len(ids))
	}
	s.tokens = len(s.ids)
	s.rows = (s.tokens + gemm.Rows - 1) / gemm.Rows * gemm.Rows
	h := m.Hidden
	s.x = make([]float32, s.rows*h)
	s.qkv = make([]float32, s.rows*3*h)
	s.ctx = make([]float32, s.rows*h)
	s.tmp = make([]float32, s.rows*h)
	s.up = make([]float32, s.rows*m.Intermediate)
	s.scores = make([]float32, longest)
	return s
}

func (s *pass) mul(y, x []float32, l *Linear) {
	if s.serial {
		gemm.MulSerial(y, x, s.rows, &l.W, l.Bias)
		return
	}
	gemm.Mul(y, x, s.rows, &l.W, l.Bias)
}

// embed writes each token's word and position embedding, normalised.
func (m *Model) embed(s *pass) {
	h := m.Hidden
	for _, seg := range s.segs {
		for r := seg.start; r < seg.end; r++ {
			m.embedToken(s.x[r*h:(r+1)*h], s.ids[r], r-seg.start)
		}
	}
}

func (m *Model) embedToken(row []float32, id, at int) {
	h := m.Hidden
	word := m.Words[id*h : (id+1)*h]
	scale := m.WordScale[id]
	pos := m.Positions[at*h : (at+1)*h]
	for j := range row {
		row[j] = float32(word[j])*scale + pos[j]
	}
	m.Norm.apply(row, m.Eps)
}

// layer runs one block in place on s.x: self-attention over the t real
// tokens, then the feed-forward network, each added to its input and
// normalised (post-norm, as BERT).
func (m *Model) layer(l *Layer, s *pass) {
	h, t := m.Hidden, s.tokens
	s.mul(s.qkv, s.x, &l.QKV)
	for _, seg := range s.segs {
		m.attention(s, seg)
	}
	s.mul(s.tmp, s.ctx, &l.Out)
	for r := range t {
		row := s.x[r*h : (r+1)*h]
		for j, v := range s.tmp[r*h : (r+1)*h] {
			row[j] += v
		}
		l.Norm1.apply(row, m.Eps)
	}
	s.mul(s.up, s.x, &l.Up)
	gelu(s.up[:t*m.Intermediate])
	s.mul(s.tmp, s.up, &l.Down)
	for r := range t {
		row := s.x[r*h : (r+1)*h]
		for j, v := range s.tmp[r*h : (r+1)*h] {
			row[j] += v
		}
		l.Norm2.apply(row, m.Eps)
	}
}

// attention writes into s.ctx each head's softmax(q·kᵀ/√d)·v for the
// rows of one sequence, reading the projections side by side in s.qkv.
func (m *Model) attention(s *pass, seg segment) {
	h, t := m.Hidden, seg.end-seg.start
	qkv, ctx := s.qkv[seg.start*3*h:seg.end*3*h], s.ctx[seg.start*h:seg.end*h]
	d := h / m.Heads
	scale := float32(1 / math.Sqrt(float64(d)))
	stride := 3 * h
	scores := s.scores[:t]
	for head := range m.Heads {
		qOff, kOff, vOff := head*d, h+head*d, 2*h+head*d
		for i := range t {
			q := qkv[i*stride+qOff : i*stride+qOff+d]
			peak := float32(math.Inf(-1))
			for j := range t {
				k := qkv[j*stride+kOff : j*stride+kOff+d]
				scores[j] = dot(q, k) * scale
				peak = max(peak, scores[j])
			}
			var sum float32
			for j := range scores {
				scores[j] = float32(math.Exp(float64(scores[j] - peak)))
				sum += scores[j]
			}
			out := ctx[i*h+qOff : i*h+qOff+d]
			clear(out)
			inv := 1 / sum
			for j, p := range scores {
				v := qkv[j*stride+vOff : j*stride+vOff+d]
				p *= inv
				for c := range out {
					out[c] += p * v[c]
				}
			}
		}
	}
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// apply normalises row to zero mean and unit variance, then scales and
// shifts it.
func (n *LayerNorm) apply(row []float32, eps float32) {
	var mean, sq float64
	for _, v := range row {
		mean += float64(v)
	}
	mean /= float64(len(row))
	for _, v := range row {
		d := float64(v) - mean
		sq += d * d
	}
	inv := float32(1 / math.Sqrt(sq/float64(len(row))+float64(eps)))
	mf := float32(mean)
	for j, v := range row {
		row[j] = (v-mf)*inv*n.Gain[j] + n.Bias[j]
	}
}

// gelu is GELU, x·Φ(x), as BERT's feed-forward uses it, with erf by
// Abramowitz and Stegun's 7.1.28, 1 - (1 + a1·z + … + a6·z⁶)^-16, whose
// absolute error is under 3e-7 (TestGELUMatchesErf): a polynomial, four
// squarings and a division, where math.Erf was a third of a forward pass
// and 7.1.26's math.Exp a tenth. It runs in float32 so that the assembly
// version (gelu_amd64.s) computes the same formula eight values at a time.
func gelu(x []float32) {
	n := geluVector(x)
	for i, v := range x[n:] {
		x[n+i] = gelu1(v)
	}
}

// The coefficients of 7.1.28.
const (
	geluA1, geluA2, geluA3 = 0.0705230784, 0.0422820123, 0.0092705272
	geluA4, geluA5, geluA6 = 0.0001520143, 0.0002765672, 0.0000430638
)

func gelu1(v float32) float32 {
	const invSqrt2 = 1 / math.Sqrt2
	az := abs32(v * invSqrt2)
	p := 1 + az*(geluA1+az*(geluA2+az*(geluA3+az*(geluA4+az*(geluA5+az*geluA6)))))
	p *= p // p², p⁴, p⁸, p¹⁶
	p *= p
	p *= p
	p *= p
	half := 0.5 * (1 - 1/p) // Φ(|v|) - ½
	if v < 0 {
		half = -half
	}
	return v * (0.5 + half)
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }
