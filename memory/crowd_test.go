package memory_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// TestRankCandidatesMatchesRank is the promise an engine relies on when it
// hands Rank only candidates: given the docs Rank would pick (and others
// that rank below them) and a Crowd with the true counts and every vector,
// RankCandidates scores each doc exactly as Rank over all docs does. And a
// crowd of all docs with every vector is Rank itself.
func TestRankCandidatesMatchesRank(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const n, dim = 400, 16
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		memory.Normalize32(v)
		return v
	}
	docs := make([]memory.RankDoc, n)
	for i := range docs {
		if i%10 != 3 { // some memories have no vector
			docs[i].Vec = vec()
		}
	}
	// A rare word with kin, a common word, and one nobody holds.
	terms := []memory.RankTerm{{Word: "bastion", Vec: vec()}, {Word: "staging", Vec: vec()}, {Word: "zebra", Vec: vec()}}
	for i := range n {
		switch {
		case i%37 == 0:
			terms[0].Held = append(terms[0].Held, i)
		case i%41 == 0:
			terms[0].Kin = append(terms[0].Kin, i)
		}
		if i%3 == 0 {
			terms[1].Held = append(terms[1].Held, i)
		}
	}
	query := vec()
	want := rank(docs, terms, query, true, nil)
	if len(want) < 60 {
		t.Fatalf("Rank scored %d docs; the test needs both sides' candidates", len(want))
	}

	crowd := memory.Crowd{N: n, Held: map[string]int{}, Kin: map[string]int{}}
	for _, d := range docs {
		if d.Vec != nil {
			crowd.Sample = append(crowd.Sample, d.Vec)
		}
	}
	for _, term := range terms {
		crowd.Held[term.Word] = len(term.Held)
		crowd.Kin[term.Word] = len(term.Kin)
	}
	if got := rank(docs, terms, query, true, &crowd); !sameScores(got, want) {
		t.Fatalf("RankCandidates over every doc differs from Rank:\n%v\n%v", got, want)
	}

	// Candidates: every doc Rank scored, plus every 7th doc, in order.
	var picked []int
	for i := range n {
		if _, ok := want[i]; ok || i%7 == 0 {
			picked = append(picked, i)
		}
	}
	sub := make([]memory.RankDoc, len(picked))
	subTerms := slices.Clone(terms)
	for t := range subTerms {
		subTerms[t].Held, subTerms[t].Kin = nil, nil
	}
	for j, i := range picked {
		sub[j] = docs[i]
		for t := range terms {
			if slices.Contains(terms[t].Held, i) {
				subTerms[t].Held = append(subTerms[t].Held, j)
			}
			if slices.Contains(terms[t].Kin, i) {
				subTerms[t].Kin = append(subTerms[t].Kin, j)
			}
		}
	}
	got := map[int]float64{}
	for j, score := range rank(sub, subTerms, query, true, &crowd) {
		got[picked[j]] = score
	}
	if !sameScores(got, want) {
		t.Fatalf("RankCandidates over %d candidates differs from Rank over %d docs:\n%v\n%v", len(sub), n, got, want)
	}
	// Without the crowd the candidates alone rank differently: the test
	// can tell.
	alone := map[int]float64{}
	for j, score := range rank(sub, subTerms, query, true, nil) {
		alone[picked[j]] = score
	}
	if sameScores(alone, want) {
		t.Fatal("Rank over the candidates alone scored as over every doc; the crowd is not tested")
	}
}

func sameScores(a, b map[int]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i, x := range a {
		if y, ok := b[i]; !ok || math.Abs(x-y) > 1e-9 {
			return false
		}
	}
	return true
}

// TestRankCandidatesKnowsCrowdWords: the relevance floor weighs the share
// of a text's words that some memory holds; with candidates only, a word
// the crowd holds counts as known though no candidate holds it. Here one
// word of six is held by a candidate and the other five only outside:
// over every doc the text is relevant, and so it is over the candidates.
func TestRankCandidatesKnowsCrowdWords(t *testing.T) {
	const n = 1000
	all := make([]memory.RankDoc, n)
	terms := []memory.RankTerm{{Word: "alpha", Held: []int{0}}}
	subTerms := []memory.RankTerm{{Word: "alpha", Held: []int{0}}}
	crowd := memory.Crowd{N: n, Held: map[string]int{"alpha": 1}}
	for i, w := range []string{"beta", "gamma", "delta", "epsilon", "zeta"} {
		at := 100 * (i + 1)
		terms = append(terms, memory.RankTerm{Word: w, Held: []int{at, at + 1, at + 2}})
		subTerms = append(subTerms, memory.RankTerm{Word: w})
		crowd.Held[w] = 3
	}
	if got := rank(all, terms, nil, false, nil); len(got) == 0 {
		t.Fatal("over every doc, the text is below the floor; the test needs it above")
	}
	if got := rank(all[:1], subTerms, nil, false, &crowd); len(got) != 1 {
		t.Fatalf("over the candidate holding one word of six, the others held in the crowd: %v, want it scored", got)
	}
}
