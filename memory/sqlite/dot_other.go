//go:build !amd64

package sqlite

const haveDotAVX2 = false

func dot8AVX2(*float32, *int8, int) float32 { panic("unreachable") }

func dot8x4AVX2(*float32, *int8, *int8, *int8, *int8, int, *[4]float32) { panic("unreachable") }
