package memory

import (
	"cmp"
	"slices"
)

// The one scorer. Each engine gathers a search's evidence its own way:
// memory/sqlite from FTS5's postings and the vectors of its catalog,
// memory/postgres from the rows or the indexes of a team (DocEvidence).
// Score alone turns that evidence into results: it picks each text's
// candidates, scores them by the formulas of fusion.go and the constants of
// search.go, drops a text below the relevance floor, runs the path stage,
// orders, limits and cuts the tail. Both engines therefore rank by the same
// code, not by two copies of the same formulas.

// TextEvidence is what an engine gathered about one text of a search
// (Query.Texts), for memories under keys of type K.
type TextEvidence[K cmp.Ordered] struct {
	// Words are the text's distinct words (QueryWords), in order.
	Words []WordEvidence
	// Lexical are the memories that hold a word of the text or a kin of
	// one, each with its exact score (see Exact): all of them, or at least
	// the best CandidatePool, ties to the lower key.
	Lexical []Hit[K]
	// Vector are the memories whose cosine with the text's vector lies
	// above the crowd's mean, each with its z-score, best first, ties to
	// the lower key: all of them, or at least the best 2·CandidatePool, so
	// that a whole pool remains once the lexical candidates are set aside.
	Vector []Hit[K]
	// Vectors reports whether the vector side knows anything: the text
	// has a vector and the crowd's cosines with it a spread above zero.
	Vectors bool
	// Spread is the standard deviation of the crowd's cosines with the
	// text's vector, so that a z-score gives back how far a memory's
	// cosine lies above the crowd's mean (see relevanceFloor).
	Spread float64
	// Exact is a memory's exact lexical score: the summed IDF of the words
	// it holds, a kin at KinWeight of its family's IDF; 0 for none.
	Exact func(key K) float64
	// Z is the z-score of a memory's cosine with the text's vector, 0 when
	// the memory has none. It is asked only when Vectors.
	Z func(key K) float64
	// WordCosine is the cosine of a memory's vector with the vector of
	// Words[w]; ok is false when the memory holds that word or a kin of
	// it, or has no vector. It is asked only of words with a Spread.
	WordCosine func(key K, w int) (cos float64, ok bool)
}

// WordEvidence is what an engine knows of one word of a search text.
type WordEvidence struct {
	// IDF is the word's weight among the memories the search sees
	// (TermIDF).
	IDF float64
	// Whole marks an identifier whole (IdentifierWholes), which counts
	// towards neither the text's relevance nor its known share.
	Whole bool
	// Known reports whether some memory the search sees holds the word or
	// a kin of it.
	Known bool
	// Mean and Spread describe the crowd's cosines with the word's own
	// vector (see SoftSample). A word without a Spread, as one without a
	// vector, earns no soft matches.
	Mean, Spread float64
}

// Score ranks one search: q asks it, texts are what the engine gathered
// for each of q's texts, and globs are the globs of every memory the search
// sees that carries any, by key, which the path stage matches against
// q.Paths (nil without paths); cache, when not nil, keeps them compiled
// across searches. It returns the results best first, ties to the lower
// key, at most q's limit, without the tail (see AboveTail). A memory scores
// the best of what each text gives it, and a text whose relevance lies
// below relevanceFloor gives nothing, unless q.NoFloor or vectors alone
// were asked for.
func Score[K cmp.Ordered](q Query, texts []TextEvidence[K], globs map[K][]string, cache *GlobCache) []Hit[K] {
	noFloor := q.NoFloor || q.Method == MethodVector
	best := map[K]float64{}
	for _, e := range texts {
		scores, relevance := scoreText(e, q.Method)
		if relevance < relevanceFloor && !noFloor {
			continue // nothing this text asks about is here
		}
		for k, score := range scores {
			if score > best[k] {
				best[k] = score
			}
		}
	}
	if len(q.Paths) > 0 {
		applyPaths(q, best, globs, cache)
	}
	ranked := make([]Hit[K], 0, len(best))
	for k, score := range best {
		ranked = append(ranked, Hit[K]{k, score})
	}
	sortHits(ranked)
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	ranked = ranked[:min(len(ranked), limit, MaxLimit)]
	return ranked[:AboveTail(q, len(ranked), func(i int) float64 { return ranked[i].Score })]
}

// sortHits orders hits best first, ties to the lower key.
func sortHits[K cmp.Ordered](hits []Hit[K]) {
	// The scores are compared with > and !=, not cmp.Compare, as both
	// engines compared them before Score: the same order to the last tie.
	slices.SortFunc(hits, func(a, b Hit[K]) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Key, b.Key)
	})
}

// scoreText scores the candidates of one search text, as described at
// vectorWeight, leaving out those that score 0, and returns the text's
// relevance, as described at relevanceFloor. The method decides which
// evidence counts: words alone, vectors alone, or both.
func scoreText[K cmp.Ordered](e TextEvidence[K], method Method) (map[K]float64, float64) {
	words, soft, lexical, vectors := e.Words, e.Words, e.Lexical, e.Vectors
	exact := e.Exact
	switch method {
	case MethodLexical:
		soft, vectors = nil, false
	case MethodVector:
		words, soft, lexical = nil, nil, nil
		exact = func(K) float64 { return 0 }
	}
	candidates := candidatesOf(lexical, e.Vector, vectors, e.Z)
	lexScore := make(map[K]float64, len(candidates))
	bestLex := 0.0
	for k := range candidates {
		score := exact(k) + softCredits(e, soft, k)
		lexScore[k] = score
		bestLex = max(bestLex, score)
	}
	whole := 0.0
	asked, known := 0, 0
	for _, w := range words {
		if !w.Whole {
			whole += w.IDF
			asked++
			if w.Known {
				known++
			}
		}
	}
	out := make(map[K]float64, len(candidates))
	relevance := 0.0
	for k, z := range candidates {
		relevance = max(relevance, candidateRelevance(lexScore[k], whole, z*e.Spread, vectors))
		if score := fusedScore(lexScore[k], bestLex, z); score > 0 {
			out[k] = score
		}
	}
	return out, relevance * knownShare(known, asked)
}

// candidatesOf returns a text's candidates with their z-scores: the best
// CandidatePool exact lexical matches, each with its own z-score when
// above the crowd, and, when the vector side knows anything, the best
// CandidatePool of the others whose vectors lie above the crowd.
func candidatesOf[K cmp.Ordered](lexical, vector []Hit[K], vectors bool, z func(K) float64) map[K]float64 {
	top := NewTopN[K](CandidatePool)
	for _, h := range lexical {
		if top.Admits(h.Key, h.Score) {
			top.Push(h.Key, h.Score)
		}
	}
	candidates := make(map[K]float64, len(top.xs)+CandidatePool)
	for _, c := range top.xs {
		candidates[c.Key] = 0
	}
	if !vectors {
		return candidates
	}
	for _, c := range top.xs {
		candidates[c.Key] = max(z(c.Key), 0)
	}
	// The vector side proposes its best among the others: there are at
	// most a pool of lexical candidates, so a pool of others lies within
	// the 2·CandidatePool an engine hands over.
	proposed := 0
	for _, c := range vector {
		if proposed == CandidatePool {
			break
		}
		if _, lexical := candidates[c.Key]; !lexical {
			candidates[c.Key] = c.Score
			proposed++
		}
	}
	return candidates
}

// softCredits is what the words a memory does not hold earn it by its
// vector, as described at softWeight.
func softCredits[K cmp.Ordered](e TextEvidence[K], words []WordEvidence, k K) float64 {
	credit := 0.0
	for w, word := range words {
		if !(word.Spread > 0) {
			continue
		}
		if cos, ok := e.WordCosine(k, w); ok {
			credit += softCredit(word.IDF, (cos-word.Mean)/word.Spread)
		}
	}
	return credit
}
