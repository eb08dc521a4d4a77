package memory

// Crowd is what an engine that hands Rank only candidates knows of the
// memories it left out: how many the search sees, how many of them hold
// each word, and an even sample of their vectors. A team database of
// 100k memories cannot ship every vector and posting to the client for
// each search; it nominates candidates from its indexes and describes the
// rest with a Crowd, and the formulas of search.go do the rest.
type Crowd struct {
	// N is how many memories the search sees (the IDF's collection size).
	N int
	// Held is how many of the N memories hold each query word (by
	// RankTerm.Word); a word missing here counts its Held positions.
	Held map[string]int
	// Kin is how many of the N memories hold a kin of each word but not
	// the word itself; a word missing here counts its Kin positions.
	Kin map[string]int
	// Sample holds unit vectors of the query's model from an even sample
	// of the N memories (all of them when N is small): the query's and
	// each word's cosines with it stand for the crowd's mean and spread.
	Sample [][]float32
}

// Rank scores the docs visible to one search text exactly as Store.Search
// scores its catalog; rank (fusion.go) says how.
func Rank(docs []RankDoc, terms []RankTerm, query []float32, noFloor bool) map[int]float64 {
	return rank(docs, terms, query, noFloor, nil)
}

// RankCandidates is Rank over candidates only: docs are the memories the
// engine nominated (by its lexical and vector indexes) and crowd describes
// all the memories the search sees. When docs hold every memory and
// crowd.Sample every vector, it scores as Rank does.
func RankCandidates(docs []RankDoc, terms []RankTerm, query []float32, noFloor bool, crowd Crowd) map[int]float64 {
	return rank(docs, terms, query, noFloor, &crowd)
}

// size is the IDF's collection size: the crowd's, or the docs'.
func (c *Crowd) size(docs int) float64 {
	if c == nil {
		return float64(docs)
	}
	return float64(max(c.N, docs))
}

// held is how many memories hold word, of which the docs show seen.
func (c *Crowd) held(word string, seen int) int {
	if c == nil {
		return seen
	}
	if n, ok := c.Held[word]; ok {
		return max(n, seen)
	}
	return seen
}

// kin is how many memories hold a kin of word and not word, of which the
// docs show seen.
func (c *Crowd) kin(word string, seen int) int {
	if c == nil {
		return seen
	}
	if n, ok := c.Kin[word]; ok {
		return max(n, seen)
	}
	return seen
}

// sample returns the crowd's vectors: the sample, or the docs' own.
func (c *Crowd) sample(docs []RankDoc, withVec []int) [][]float32 {
	if c != nil {
		return c.Sample
	}
	out := make([][]float32, len(withVec))
	for j, i := range withVec {
		out[j] = docs[i].Vec
	}
	return out
}

// cosines are query's cosines with the vectors of its size in vs.
func cosines32(query []float32, vs [][]float32) []float32 {
	out := make([]float32, 0, len(vs))
	for _, v := range vs {
		if len(v) == len(query) && len(v) > 0 {
			out = append(out, dot32(query, v))
		}
	}
	return out
}

// TermIDF is the weight of a word that df of n memories hold, as Rank
// weighs it; an engine nominating candidates orders them by it.
func TermIDF(n, df int) float64 { return termIDF(float64(n), float64(df)) }

// KinWeight is the share of a word's IDF a memory holding only its kin earns.
const KinWeight = kinWeight

// KinMaxHeld is how many memories may hold a word for its kin to count.
const KinMaxHeld = kinMaxHeld
