package format

import (
	"fmt"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

func benchMemories(n int) []memory.Memory {
	mems := make([]memory.Memory, n)
	for i := range mems {
		mems[i] = stored(fmt.Sprintf("01J%023d", i), fmt.Sprintf("fact number %d about cmd/app.go and how the tests run", i), t0.Add(time.Duration(i)*time.Second))
	}
	return mems
}

func BenchmarkEncode10k(b *testing.B) {
	mems := benchMemories(10000)
	for b.Loop() {
		Encode(mems)
	}
}

func BenchmarkDecode10k(b *testing.B) {
	data := Encode(benchMemories(10000))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode("bench", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMerge10k(b *testing.B) {
	base := benchMemories(10000)
	ours := append(benchMemories(10000), stored("02A", "ours", t0))
	theirs := append(benchMemories(10000), stored("02B", "theirs", t0))
	bb, ob, tb := Encode(base), Encode(ours), Encode(theirs)
	for b.Loop() {
		if _, _, err := Merge(bb, ob, tb); err != nil {
			b.Fatal(err)
		}
	}
}
