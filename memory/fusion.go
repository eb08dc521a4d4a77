package memory

import (
	"maps"
	"math"
	"slices"
)

// The formulas of the ranking, with the constants of search.go: Score
// (score.go) applies them for every engine, and an engine gathering
// evidence weighs words by TermIDF.

// TermIDF is the weight of a word that df of n memories hold, as Score
// weighs it; an engine gathering candidates orders them by it.
func TermIDF(n, df int) float64 { return termIDF(float64(n), float64(df)) }

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
// whole the summed IDF of the text's words (identifier wholes aside), lead
// how far its cosine lies above the crowd's mean (see leadNone), and
// vectors whether the vector side knew anything
// (a spread above zero). The text's relevance is the highest over its
// candidates, times knownShare.
func candidateRelevance(lex, whole, lead float64, vectors bool) float64 {
	near := max(0, min(1, (lead-leadNone)/(leadFull-leadNone)))
	switch {
	case whole <= 0:
		return near
	case !vectors:
		return min(1, lex/whole)
	}
	return relevanceVectorWeight*near + (1-relevanceVectorWeight)*min(1, lex/whole)
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
// A text yields at most MaxQueryTerms distinct words, its first ones: each
// costs a search one index lookup or more, and a pasted page of 8 KiB (the
// limit of a query) held 1,300 of them and took 8.6 s. A question never
// comes near the cap.
func QueryWords(text string) []string {
	var out []string
	for _, w := range queryWords(text) {
		if !slices.Contains(out, w) {
			if len(out) == MaxQueryTerms {
				break
			}
			out = append(out, w)
		}
	}
	return out
}

// MaxQueryTerms is how many distinct words of one text a search looks up.
const MaxQueryTerms = 48

// RecallGranularity is how stale a recorded recall time may get: an
// engine records a search's results only when their time is older.
const RecallGranularity = recallGranularity

// applyPaths is the path stage of a search, which Score runs over its
// fused scores before it sorts and cuts them: for q.Paths, each visible
// memory of globs (those that carry any, with their globs) that matches a
// file at hand scores as pathFloor says, found by meaning or not; with
// q.OnlyPath, the others are dropped. cache, when not nil, keeps the
// globs compiled across searches. Its work is bounded (pathWorkBudget,
// globmatch.go): a memory it could not match within the bound, the
// costliest first, counts as not applying to the files at hand.
func applyPaths[K comparable](q Query, scores map[K]float64, globs map[K][]string, cache *GlobCache) {
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
