package memory

// Crowd is what an engine that hands DocEvidence only candidates knows of
// the memories it left out: how many the search sees, how many of them hold
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
