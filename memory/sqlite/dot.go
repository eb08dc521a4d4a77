package sqlite

// dot8 is the inner loop of every search: the query's float32 vector
// against one stored int8 vector, as many elements as the query has.
func dot8(query []float32, q []int8) float32 {
	q = q[:len(query)]
	n := len(query) &^ 7
	var s float32
	if n > 0 && haveDotAVX2 {
		s = dot8AVX2(&query[0], &q[0], n)
	} else {
		n = 0
	}
	return s + dot8Go(query[n:], q[n:])
}

// dot8Go is dot8 in plain Go: four independent sums let the CPU overlap
// the multiplies, and slicing both operands to one length lets the
// compiler drop the bounds checks.
func dot8Go(query []float32, q []int8) float32 {
	q = q[:len(query)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(query); i += 4 {
		s0 += query[i] * float32(q[i])
		s1 += query[i+1] * float32(q[i+1])
		s2 += query[i+2] * float32(q[i+2])
		s3 += query[i+3] * float32(q[i+3])
	}
	for ; i < len(query); i++ {
		s0 += query[i] * float32(q[i])
	}
	return s0 + s1 + s2 + s3
}
