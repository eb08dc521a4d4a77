package memory

import (
	"cmp"
	"slices"
)

// RankDoc is one memory a search can see, as an engine hands it to
// DocEvidence.
type RankDoc struct {
	// Vec is the memory's unit vector from the query's embedder; nil
	// when it has none from that model.
	Vec []float32
}

// RankTerm is one distinct query word (from QueryWords) and what the
// engine's lexical index says about it.
type RankTerm struct {
	Word string
	// Held lists the positions, among the docs given to DocEvidence, of
	// the memories whose lexical index holds the word.
	Held []int
	// Kin lists the positions of the memories whose lexical index holds a
	// kin of the word (a match of one of KinForms(Word)); those that hold
	// the word itself are ignored here. An engine need not look kin up
	// for an identifier whole: DocEvidence ignores them.
	Kin []int
	// Whole marks an identifier whole (see IdentifierWholes).
	Whole bool
	// Vec is the word's own unit vector; nil when the embedder gave none.
	Vec []float32
}

// DocEvidence gathers Score's evidence of one search text over plain
// slices, for an engine (memory/postgres) that reads the memories
// themselves: docs, under keys (keys[i] is docs[i]'s), with the words its
// own full-text index found in them (terms) and the vectors it stores.
// query is the text's unit vector, nil when there is none. With crowd nil
// the docs are every memory the search sees; otherwise they are the
// candidates the engine nominated by its indexes, and crowd describes
// every memory the search sees (crowd.go): when docs hold every memory and
// crowd.Sample every vector, the evidence is the same.
//
// memory/sqlite looks kin up only for words that at most KinMaxHeld
// memories of the whole store hold, visible or not; DocEvidence counts
// the docs it is given (or the crowd), so the two differ only for a word
// that more than KinMaxHeld memories hold outside the search's view.
func DocEvidence[K cmp.Ordered](keys []K, docs []RankDoc, terms []RankTerm, query []float32, crowd *Crowd) TextEvidence[K] {
	if len(docs) == 0 {
		return TextEvidence[K]{}
	}
	at := make(map[K]int, len(docs))
	for i, k := range keys[:len(docs)] {
		at[k] = i
	}
	lex := docLexical(keys, docs, terms, crowd)
	vec := docVectors(keys, docs, query, crowd)
	docSoft(lex.words, terms, query, crowd.sample(docs, vec.withVec))
	e := TextEvidence[K]{Words: lex.words, Lexical: lex.hits, Vector: vec.above, Vectors: vec.spread > 0, Spread: vec.spread}
	e.Exact = func(k K) float64 { return lex.exact[at[k]] }
	e.Z = func(k K) float64 {
		i := at[k]
		if !vec.has[i] {
			return 0
		}
		return (float64(vec.cos[i]) - vec.mean) / vec.spread
	}
	e.WordCosine = func(k K, w int) (float64, bool) {
		i := at[k]
		if !vec.has[i] {
			return 0, false
		}
		if _, holds := slices.BinarySearch(lex.held[w], i); holds {
			return 0, false
		}
		return float64(dot32(terms[w].Vec, docs[i].Vec)), true
	}
	return e
}

// docLex is what DocEvidence's terms say of its docs.
type docLex[K cmp.Ordered] struct {
	// exact is each doc's exact score, by position.
	exact []float64
	// held lists, for each term, the positions of the docs that hold it
	// or one of its kin, ascending.
	held  [][]int
	words []WordEvidence
	hits  []Hit[K]
}

func docLexical[K cmp.Ordered](keys []K, docs []RankDoc, terms []RankTerm, crowd *Crowd) docLex[K] {
	n := crowd.size(len(docs))
	// An engine's positions may repeat or stray; each counts once, and
	// only for a doc that was given.
	clean := func(xs []int) []int {
		xs = slices.Clone(xs)
		slices.Sort(xs)
		xs = slices.Compact(xs)
		return slices.DeleteFunc(xs, func(i int) bool { return i < 0 || i >= len(docs) })
	}
	m := docLex[K]{exact: make([]float64, len(docs)), held: make([][]int, len(terms)), words: make([]WordEvidence, len(terms))}
	var matched []int
	credit := func(i int, score float64) {
		if m.exact[i] == 0 {
			matched = append(matched, i)
		}
		m.exact[i] += score
	}
	for t, term := range terms {
		h := clean(term.Held)
		df := crowd.held(term.Word, len(h))
		idf := termIDF(n, float64(df))
		for _, i := range h {
			credit(i, idf)
		}
		var near []int
		if !term.Whole && df <= KinMaxHeld {
			near = slices.DeleteFunc(clean(term.Kin), func(i int) bool {
				_, holds := slices.BinarySearch(h, i)
				return holds
			})
		}
		if len(near) > 0 {
			family := KinWeight * termIDF(n, float64(df+crowd.kin(term.Word, len(near))))
			for _, i := range near {
				credit(i, family)
			}
			// Kin count as held: they earn no soft match on top.
			h = append(h, near...)
			slices.Sort(h)
		}
		m.held[t] = h
		// With a crowd, a word may be held (or its kin) outside the
		// candidates.
		known := len(h) > 0 || df > 0 || (df <= KinMaxHeld && crowd.kin(term.Word, 0) > 0)
		m.words[t] = WordEvidence{IDF: idf, Whole: term.Whole, Known: known}
	}
	m.hits = make([]Hit[K], len(matched))
	for j, i := range matched {
		m.hits[j] = Hit[K]{keys[i], m.exact[i]}
	}
	return m
}

// docVec is what DocEvidence's query vector says of its docs.
type docVec[K cmp.Ordered] struct {
	// withVec are the positions of the docs with a vector of the query's
	// size; has and cos say the same by position.
	withVec []int
	has     []bool
	cos     []float32
	// mean and spread are the crowd's cosines' (see MeanDeviation).
	mean, spread float64
	above        []Hit[K]
}

func docVectors[K cmp.Ordered](keys []K, docs []RankDoc, query []float32, crowd *Crowd) docVec[K] {
	v := docVec[K]{has: make([]bool, len(docs)), cos: make([]float32, len(docs))}
	// Only memories with a vector of the query's size are compared, as
	// memory/sqlite's catalog holds vectors of the current model only.
	var cos []float32
	for i, d := range docs {
		if len(d.Vec) > 0 && len(d.Vec) == len(query) {
			v.withVec = append(v.withVec, i)
			v.has[i], v.cos[i] = true, dot32(query, d.Vec)
			cos = append(cos, v.cos[i])
		}
	}
	if crowd != nil {
		cos = cosines32(query, crowd.Sample)
	}
	v.mean, v.spread = MeanDeviation(cos)
	if v.spread > 0 {
		above := NewTopN[K](2 * CandidatePool)
		for _, i := range v.withVec {
			if z := (float64(v.cos[i]) - v.mean) / v.spread; z > 0 {
				above.Push(keys[i], z)
			}
		}
		v.above = above.Best()
	}
	return v
}

// docSoft sets the crowd each word's soft matches are judged against
// (words[t] is terms[t]'s), from an evenly spread sample of pool.
func docSoft(words []WordEvidence, terms []RankTerm, query []float32, pool [][]float32) {
	if len(pool) == 0 {
		return
	}
	step := (len(pool) + SoftSample - 1) / SoftSample
	for t, term := range terms {
		if len(term.Vec) == 0 || len(term.Vec) != len(query) {
			continue
		}
		var sample []float32
		for j := 0; j < len(pool); j += step {
			if len(pool[j]) == len(term.Vec) {
				sample = append(sample, dot32(term.Vec, pool[j]))
			}
		}
		if mean, spread := MeanDeviation(sample); spread > 0 {
			words[t].Mean, words[t].Spread = mean, spread
		}
	}
}

func dot32(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
