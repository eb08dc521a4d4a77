//go:build !amd64

package sqlite

const haveDotAVX2 = false

func dot8AVX2(*float32, *int8, int) float32 { panic("unreachable") }
