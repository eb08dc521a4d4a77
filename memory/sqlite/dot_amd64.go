package sqlite

import "golang.org/x/sys/cpu"

// A search takes a cosine with every visible memory; at 10k memories of
// 100 dimensions the plain Go loop cost about 1 ms of a 5 ms search, and
// AVX2 with FMA (every x86-64 CPU since 2013-2015) does it in a tenth.
var haveDotAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dot8AVX2 is the dot product of n float32s at query with n int8s at q;
// n must be a positive multiple of 8.
//
//go:noescape
func dot8AVX2(query *float32, q *int8, n int) float32

// dot8x4AVX2 is dot8AVX2 of the same query with four int8 vectors at once,
// each result equal to dot8AVX2's to the bit; n must be a positive
// multiple of 8.
//
//go:noescape
func dot8x4AVX2(query *float32, q0, q1, q2, q3 *int8, n int, out *[4]float32)
