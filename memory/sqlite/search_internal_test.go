package sqlite

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSeqFinderAgreesWithIndex holds the galloping lookup to a binary
// search over the catalog, for ascending runs and for the runs a word's
// joined pairs append out of order.
func TestSeqFinderAgreesWithIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		c := &catalog{}
		seq := int64(0)
		for range r.IntN(300) {
			seq += 1 + r.Int64N(5)
			c.seqs = append(c.seqs, seq)
		}
		var asked []int64
		for range 1 + r.IntN(3) { // one ascending run per posting list
			var run []int64
			for range r.IntN(100) {
				run = append(run, r.Int64N(seq+3))
			}
			slices.Sort(run)
			asked = append(asked, run...)
		}
		find := seqFinder(c.seqs)
		for _, s := range asked {
			if got, want := find(s), c.index(s); got != want {
				t.Fatalf("round %d: seq %d at %d, want %d (seqs %v, asked %v)", round, s, got, want, c.seqs, asked)
			}
		}
	}
}

func TestParseRowids(t *testing.T) {
	want := []int64{1, 42, 999999999999999999, 1234567890123456789, 7}
	fields := make([]string, len(want))
	for i, n := range want {
		fields[i] = strconv.FormatInt(n, 10)
	}
	got, err := parseRowids(strings.Join(fields, ","))
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("parseRowids = %v, %v; want %v", got, err, want)
	}
	if got, err := parseRowids(""); err != nil || len(got) != 0 {
		t.Fatalf("parseRowids(\"\") = %v, %v", got, err)
	}
	if got, err := parseRowids("-3,5"); err != nil || !slices.Equal(got, []int64{-3, 5}) {
		t.Fatalf("parseRowids(-3,5) = %v, %v", got, err)
	}
	if _, err := parseRowids("12,x3"); err == nil {
		t.Fatal("parseRowids took a rowid that is no number")
	}
}

// TestRareOutweigh: at 100k memories two words held by one and two
// memories outweigh four common words, not five.
func TestRareOutweigh(t *testing.T) {
	rare := [][]int64{{1}, {2, 3}, {}}
	for common, want := range map[int]bool{0: true, 4: true, 5: false} {
		if got := rareOutweigh(rare, common, 100_000); got != want {
			t.Errorf("rareOutweigh(%d common) = %t, want %t", common, got, want)
		}
	}
	if rareOutweigh(nil, 1, 10) {
		t.Error("no rare word outweighs a common one")
	}
}
