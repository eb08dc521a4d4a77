package memory

import (
	"maps"
	"math"
	"slices"
)

// The pieces of the ranking that every engine shares. memory/sqlite's
// Store.Search applies them over its catalog (through ranking.go's names); Rank applies them over plain slices, for an engine
// (memory/postgres) that hands over its visible memories, the lexical
// matches its own full-text index found, and the vectors it stores. Both
// therefore rank by the formulas and constants of search.go.

// termIDF is a query word's weight when df of the n visible memories hold
// it (see idfMinMemories, and lexical in memory/sqlite).
func termIDF(n, df float64) float64 {
	n = max(n, idfMinMemories)
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// softCredit is what a word a memory does not hold earns when the
// memory's vector lies z standard deviations nearer the word than the
// crowd (see softWeight).
func softCredit(idf, z float64) float64 {
	if z <= 0 {
		return 0
	}
	return softWeight * idf * min(1, z/softFullZ)
}

// fusedScore is a candidate's final score (see vectorWeight) from its
// lexical score, the best lexical score among the candidates, and its
// vector z-score.
func fusedScore(lex, bestLex, z float64) float64 {
	score := vectorWeight * min(1, z/vectorFullZ)
	if bestLex > 0 {
		score += (1 - vectorWeight) * lex / bestLex
	}
	return score
}

// candidateRelevance is what one candidate says of its search text's
// relevance, as described at relevanceFloor: lex is its lexical score,
// whole the summed IDF of the text's words (identifier wholes aside), z
// its vector z-score, and vectors whether the vector side knew anything
// (a spread above zero). The text's relevance is the highest over its
// candidates, times knownShare.
func candidateRelevance(lex, whole, z float64, vectors bool) float64 {
	switch {
	case whole <= 0:
		return min(1, z/vectorFullZ)
	case !vectors:
		return min(1, lex/whole)
	}
	return relevanceVectorWeight*min(1, z/vectorFullZ) + (1-relevanceVectorWeight)*min(1, lex/whole)
}

// knownShare is the share of a text's words (identifier wholes aside)
// that some visible memory holds or holds a kin of, with one word's
// benefit of the doubt (Laplace's rule: known+1 of asked+1): the factor
// its relevance is taken at (see relevanceFloor). A small store lacks
// most words of any question, even ones it answers, so a question of
// three words of which it knows one counts as knowing half.
func knownShare(known, asked int) float64 {
	return float64(known+1) / float64(asked+1)
}

// IdentifierWholes are the words of QueryWords(text) that join an
// identifier's parts (parseConfig: parseconfig). They have no kin of
// their own and do not count towards the text's relevance.
func IdentifierWholes(text string) []string { return identifierWholes(text) }

// QueryWords are the words of a search text an engine looks up in its
// lexical index: the same words memory/sqlite's Store.Search looks up.
//
// A text yields at most maxQueryTerms distinct words, its first ones: each
// costs a search one index lookup or more, and a pasted page of 8 KiB (the
// limit of a query) held 1,300 of them and took 8.6 s. A question never
// comes near the cap.
func QueryWords(text string) []string {
	var out []string
	for _, w := range queryWords(text) {
		if !slices.Contains(out, w) {
			if len(out) == maxQueryTerms {
				break
			}
			out = append(out, w)
		}
	}
	return out
}

// maxQueryTerms is how many distinct words of one text a search looks up.
const maxQueryTerms = 48

// RecallGranularity is how stale a recorded recall time may get: an
// engine records a search's results only when their time is older.
const RecallGranularity = recallGranularity

// RankDoc is one memory a search can see, as an engine hands it to Rank.
type RankDoc struct {
	// Vec is the memory's unit vector from the query's embedder; nil
	// when it has none from that model.
	Vec []float32
}

// RankTerm is one distinct query word (from QueryWords) and what the
// engine's lexical index says about it.
type RankTerm struct {
	Word string
	// Held lists the positions, among the docs given to Rank, of the
	// memories whose lexical index holds the word.
	Held []int
	// Kin lists the positions of the memories whose lexical index holds a
	// kin of the word (a match of one of KinForms(Word)); those that hold
	// the word itself are ignored here. An engine need not look kin up
	// for an identifier whole: Rank ignores them.
	Kin []int
	// Whole marks an identifier whole (see IdentifierWholes).
	Whole bool
	// Vec is the word's own unit vector; nil when the embedder gave none.
	Vec []float32
}

// rank is Rank, and RankCandidates when crowd is not nil (crowd.go).
//
// Rank scores the docs visible to one search text exactly as memory/sqlite's
// Store.Search scores its catalog: the best exact lexical matches and the memories
// whose vectors lie furthest above the crowd are the candidates, and each
// scores fusedScore of its summed IDF (kin at kinWeight) plus soft matches
// and its z-score. query is the text's unit vector, nil when there is
// none. It returns the score of each candidate by doc position, leaving
// out scores of 0, and nothing at all when the text's relevance lies
// below relevanceFloor, unless noFloor (Query.NoFloor).
//
// Store.Search looks kin up only for words that at most kinMaxHeld
// memories of the whole store hold, visible or not; Rank counts the
// docs it is given, so the two differ only for a word that more than
// kinMaxHeld memories hold outside the search's view.
func rank(docs []RankDoc, terms []RankTerm, query []float32, noFloor bool, crowd *Crowd) map[int]float64 {
	if len(docs) == 0 {
		return map[int]float64{}
	}
	n := crowd.size(len(docs))
	clean := func(xs []int) []int {
		xs = slices.Clone(xs)
		slices.Sort(xs)
		xs = slices.Compact(xs)
		return slices.DeleteFunc(xs, func(i int) bool { return i < 0 || i >= len(docs) })
	}
	exact := make([]float64, len(docs))
	held := make([][]int, len(terms))
	idfs := make([]float64, len(terms))
	whole := 0.0
	asked, known := 0, 0
	var matched []int
	for t, term := range terms {
		h := clean(term.Held)
		df := crowd.held(term.Word, len(h))
		idfs[t] = termIDF(n, float64(df))
		for _, i := range h {
			if exact[i] == 0 {
				matched = append(matched, i)
			}
			exact[i] += idfs[t]
		}
		if !term.Whole {
			whole += idfs[t]
		}
		var near []int
		if !term.Whole && df <= kinMaxHeld {
			near = slices.DeleteFunc(clean(term.Kin), func(i int) bool {
				_, holds := slices.BinarySearch(h, i)
				return holds
			})
		}
		if len(near) > 0 {
			family := kinWeight * termIDF(n, float64(df+crowd.kin(term.Word, len(near))))
			for _, i := range near {
				if exact[i] == 0 {
					matched = append(matched, i)
				}
				exact[i] += family
			}
			// Kin count as held: they earn no soft match on top.
			h = append(h, near...)
			slices.Sort(h)
		}
		held[t] = h
		if !term.Whole {
			asked++
			// With a crowd, a word may be held (or its kin) outside the
			// candidates.
			if len(h) > 0 || df > 0 || (df <= kinMaxHeld && crowd.kin(term.Word, 0) > 0) {
				known++
			}
		}
	}
	top := newTopN(candidatePool)
	for _, i := range matched {
		top.push(scored{int64(i), exact[i]})
	}
	candidates := make(map[int]float64, len(top.xs)+candidatePool)
	for _, c := range top.xs {
		candidates[int(c.seq)] = 0
	}

	// Only memories with a vector of the query's size are compared, as
	// the catalog only holds vectors of the current model.
	var withVec []int
	for i, d := range docs {
		if len(d.Vec) > 0 && len(d.Vec) == len(query) {
			withVec = append(withVec, i)
		}
	}
	cos := make([]float32, len(withVec))
	for j, i := range withVec {
		cos[j] = dot32(query, docs[i].Vec)
	}
	crowdCos := cos
	if crowd != nil {
		crowdCos = cosines32(query, crowd.Sample)
	}
	mean, spread := meanDeviation(crowdCos)
	if spread > 0 {
		proposals := newTopN(candidatePool)
		for j, i := range withVec {
			z := (float64(cos[j]) - mean) / spread
			if z <= 0 {
				continue
			}
			if _, lexical := candidates[i]; lexical {
				candidates[i] = z
			} else {
				proposals.push(scored{int64(i), z})
			}
		}
		for _, c := range proposals.xs {
			candidates[int(c.seq)] = c.score
		}
	}

	// Soft matches, judged against an evenly spread sample of the crowd.
	type wordStats struct {
		t            int
		mean, spread float64
	}
	var words []wordStats
	if pool := crowd.sample(docs, withVec); len(pool) > 0 {
		step := (len(pool) + softSample - 1) / softSample
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
			if mean, spread := meanDeviation(sample); spread > 0 {
				words = append(words, wordStats{t, mean, spread})
			}
		}
	}
	lexScore := make(map[int]float64, len(candidates))
	bestLex := 0.0
	for i := range candidates {
		score := exact[i]
		if v := docs[i].Vec; len(v) > 0 && len(v) == len(query) {
			for _, w := range words {
				if _, holds := slices.BinarySearch(held[w.t], i); holds {
					continue
				}
				score += softCredit(idfs[w.t], (float64(dot32(terms[w.t].Vec, v))-w.mean)/w.spread)
			}
		}
		lexScore[i] = score
		bestLex = max(bestLex, score)
	}
	out := make(map[int]float64, len(candidates))
	relevance := 0.0
	for i, z := range candidates {
		relevance = max(relevance, candidateRelevance(lexScore[i], whole, z, spread > 0))
		if score := fusedScore(lexScore[i], bestLex, z); score > 0 {
			out[i] = score
		}
	}
	if relevance*knownShare(known, asked) < relevanceFloor && !noFloor {
		return map[int]float64{} // nothing this text asks about is here
	}
	return out
}

func dot32(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// ApplyPaths is the path stage of a search, which every engine runs over
// its fused scores (by whatever key it ranks) before it sorts and cuts
// them: for q.Paths, each visible memory of globs (those that carry any,
// with their globs) that matches a file at hand scores as pathFloor says,
// found by meaning or not; with q.OnlyPath, the others are dropped. A
// search without paths is left as it is. Its work is bounded
// (pathWorkBudget, globmatch.go): a memory it could not match within the
// bound, the costliest first, counts as not applying to the files at hand.
func ApplyPaths[K comparable](q Query, scores map[K]float64, globs map[K][]string) {
	ApplyPathsCached(q, scores, globs, nil)
}

// ApplyPathsCached is ApplyPaths for an engine that keeps its memories'
// globs compiled in cache, across searches.
func ApplyPathsCached[K comparable](q Query, scores map[K]float64, globs map[K][]string, cache *GlobCache) {
	if len(q.Paths) == 0 {
		return
	}
	applies := pathSearch[K]{matcher: NewPathMatcher(q.Paths), cache: cache}.applying(globs)
	for k := range applies {
		scores[k] = pathScore(scores[k], everyFileOnly(globs[k], q.Paths))
	}
	if q.OnlyPath {
		maps.DeleteFunc(scores, func(k K, _ float64) bool { return !applies[k] })
	}
}

// everyFileOnly says whether a memory whose globs match one of the paths
// matches them only through AlwaysGlob: it is about every file, not these.
func everyFileOnly(globs, paths []string) bool {
	if !slices.Contains(globs, AlwaysGlob) {
		return false
	}
	for _, g := range globs {
		if g != AlwaysGlob && MatchesAny([]string{g}, paths) {
			return false
		}
	}
	return true
}

// pathScore is what a memory that applies to a file at hand scores, from
// its fused score: from pathFloor, or alwaysFloor when it applies to the
// file only as it does to every file (see pathFloor).
func pathScore(fused float64, everyFile bool) float64 {
	floor := pathFloor
	if everyFile {
		floor = alwaysFloor
	}
	return floor + (1-floor)*fused
}
