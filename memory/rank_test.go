package memory_test

import (
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// rank scores one text over docs through DocEvidence and Score, as
// memory/postgres does: every doc Score returns, by position. Positions are
// the keys, so ties break as they would by position.
func rank(docs []memory.RankDoc, terms []memory.RankTerm, query []float32, noFloor bool, crowd *memory.Crowd) map[int]float64 {
	keys := make([]int, len(docs))
	for i := range keys {
		keys[i] = i
	}
	e := memory.DocEvidence(keys, docs, terms, query, crowd)
	q := memory.Query{Text: "a search", NoFloor: noFloor, Filter: memory.Filter{Limit: memory.MaxLimit}}
	out := map[int]float64{}
	for _, h := range memory.Score(q, []memory.TextEvidence[int]{e}, nil, nil) {
		out[h.Key] = h.Score
	}
	return out
}

// TestRankKinAndFloor drives the scorer as an engine without vectors would: a
// memory holding only a kin of a word ("database" for "db") is found at
// half the word's weight, a text that most of the memories' words do not
// cover finds nothing unless NoFloor, and an identifier whole neither
// brings kin nor counts against the text's coverage.
func TestRankKinAndFloor(t *testing.T) {
	docs := make([]memory.RankDoc, 3)
	db := memory.RankTerm{Word: "db", Kin: []int{0}}
	got := rank(docs, []memory.RankTerm{db}, nil, false, nil)
	if len(got) != 1 || got[0] <= 0 {
		t.Fatalf("a memory holding a kin of the only word: %v, want doc 0 found", got)
	}
	held := memory.RankTerm{Word: "staging", Held: []int{1}}
	got = rank(docs, []memory.RankTerm{db, held}, nil, false, nil)
	if got[1] <= got[0] || got[0] <= 0 {
		t.Fatalf("kin against a held word: %v, want doc 1 above doc 0, both found", got)
	}
	// Two words no memory holds: a kin covers too little of the text.
	absent := []memory.RankTerm{db, {Word: "mongolia"}, {Word: "capital"}}
	if got = rank(docs, absent, nil, false, nil); len(got) != 0 {
		t.Fatalf("a text mostly about nothing here: %v, want nothing relevant", got)
	}
	if got = rank(docs, absent, nil, true, nil); len(got) != 1 {
		t.Fatalf("the same without the floor: %v, want doc 0", got)
	}
	// As identifier wholes the absent words do not count against it, and
	// a whole's own kin are ignored.
	wholes := []memory.RankTerm{db, {Word: "mongolia", Whole: true}, {Word: "capitalcity", Whole: true, Kin: []int{2}}}
	if got = rank(docs, wholes, nil, false, nil); len(got) != 1 || got[0] <= 0 {
		t.Fatalf("with the absent words as identifier wholes: %v, want doc 0 alone", got)
	}
	// Kin of a word that many memories hold already are left out: doc 299
	// (the best match, by a rare word) scores no higher for holding a
	// kin of the common one, so doc 0 keeps its score relative to it.
	many := make([]memory.RankDoc, 300)
	common := memory.RankTerm{Word: "test"}
	for i := range 250 {
		common.Held = append(common.Held, i)
	}
	rare := memory.RankTerm{Word: "bastion", Held: []int{299}}
	without := rank(many, []memory.RankTerm{common, rare}, nil, true, nil)
	common.Kin = []int{299}
	with := rank(many, []memory.RankTerm{common, rare}, nil, true, nil)
	if without[0] <= 0 || with[0] != without[0] {
		t.Fatalf("kin of a common word: doc 0 scored %v with them, %v without; want the same", with[0], without[0])
	}
	// A rarer word's kin do count, and lower doc 0 against doc 299.
	common.Held, common.Kin = common.Held[:100], nil
	without = rank(many, []memory.RankTerm{common, rare}, nil, true, nil)
	with = rank(many, []memory.RankTerm{{Word: "test", Held: common.Held, Kin: []int{299}}, rare}, nil, true, nil)
	if !(with[0] < without[0]) {
		t.Fatalf("kin of a rarer word: doc 0 scored %v with them, %v without; want lower with", with[0], without[0])
	}
}

// A text is taken at the share of its words the memories know at all:
// the best match covering a fifth of the text is relevant when the other
// words are what other memories are about, and not when no memory knows
// them (a question asked of the wrong project).
func TestRankKnownShare(t *testing.T) {
	docs := make([]memory.RankDoc, 5)
	text := func(othersKnown bool) []memory.RankTerm {
		terms := []memory.RankTerm{{Word: "staging", Held: []int{0}}}
		for i, w := range []string{"coffee", "beans", "order", "weekly"} {
			term := memory.RankTerm{Word: w}
			if othersKnown {
				term.Held = []int{i + 1}
			}
			terms = append(terms, term)
		}
		return terms
	}
	if got := rank(docs, text(true), nil, false, nil); len(got) != 5 {
		t.Fatalf("every word known to some memory: %v, want all five found", got)
	}
	if got := rank(docs, text(false), nil, false, nil); len(got) != 0 {
		t.Fatalf("four of five words known to none: %v, want nothing relevant", got)
	}
	if got := rank(docs, text(false), nil, true, nil); len(got) != 1 || got[0] <= 0 {
		t.Fatalf("the same without the floor: %v, want doc 0", got)
	}
}
