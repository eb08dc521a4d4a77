package memory

// The parts of the ranking that an engine scoring over its own data
// (memory/sqlite scores over its catalog) needs, exported under one roof.
// Each is defined once, in fusion.go, search.go or words.go, with its
// reasons and measurements; these are its names for other packages, so
// that every engine ranks by the same formulas and constants (crowd.go
// exports TermIDF, KinWeight and KinMaxHeld for memory/postgres).

// Search constants an engine applies as Rank does.
const (
	// CandidatePool is how many memories each side (lexical, vector)
	// proposes before fusion.
	CandidatePool = candidatePool
	// RelevanceFloor is the relevance below which a search text finds
	// nothing (see relevanceFloor).
	RelevanceFloor = relevanceFloor
	// SoftSample is how many memories, evenly spread, estimate the
	// crowd a soft match is judged against (see softWeight).
	SoftSample = softSample
	// MaxQueryTerms is how many distinct words of one text a search
	// looks up (see QueryWords); it bounds the joined word pairs too.
	MaxQueryTerms = maxQueryTerms
)

// SoftCredit is what a word a memory does not hold earns when the
// memory's vector lies z standard deviations nearer the word than the
// crowd.
func SoftCredit(idf, z float64) float64 { return softCredit(idf, z) }

// FusedScore is a candidate's final score from its lexical score, the best
// lexical score among the candidates, and its vector z-score.
func FusedScore(lex, bestLex, z float64) float64 { return fusedScore(lex, bestLex, z) }

// CandidateRelevance is what one candidate says of its search text's
// relevance; the text's relevance is the highest over its candidates.
func CandidateRelevance(lex, whole, z float64, vectors bool) float64 {
	return candidateRelevance(lex, whole, z, vectors)
}

// KnownShare is the factor a text's relevance is taken at: the share of
// its words (identifier wholes aside) that some visible memory holds or
// holds a kin of, with one word's benefit of the doubt.
func KnownShare(known, asked int) float64 { return knownShare(known, asked) }

// MeanDeviation returns the mean and standard deviation of xs: the crowd
// a vector z-score is measured against.
func MeanDeviation(xs []float32) (mean, spread float64) { return meanDeviation(xs) }

// WordPairs are the adjacent query words of text that a memory may write
// as one ("codepaths" for "code paths"); a memory holding the joined word
// holds both.
func WordPairs(text string) [][2]string { return wordPairs(text) }

// DerivationalBase is the base that LexicalForms indexes for the word w
// ("duplicate" for "deduplication"), or "" when it has none.
func DerivationalBase(w string) string { return derivationalBase(w) }

// MayBeBase reports whether w, a word without a derivational base of its
// own, may be the base of other words, and so be found among the forms
// LexicalForms indexes.
func MayBeBase(w string) bool { return isASCII(w) && len(w) >= minKin }

// Scored is one candidate's score on one side of a search.
type Scored struct {
	Seq   int64
	Score float64
}

// TopN keeps the n highest scores pushed to it, best first, ties to the
// lower seq, as Rank keeps its candidates.
type TopN struct{ t *topN }

// NewTopN returns an empty TopN of n.
func NewTopN(n int) TopN { return TopN{newTopN(n)} }

// Push offers a candidate.
func (t TopN) Push(seq int64, score float64) { t.t.push(scored{seq, score}) }

// Admits reports whether Push would keep a candidate now. It is cheap and
// inlined, so a caller that offers many candidates, most of them turned
// away (the vector side of a search at 100k memories offers about half of
// them), tests first and calls Push only for the rest.
func (t TopN) Admits(seq int64, score float64) bool {
	k := t.t
	if len(k.xs) < k.n {
		return true
	}
	last := k.xs[k.n-1]
	return score > last.score || score == last.score && seq < last.seq
}

// Last returns the worst candidate kept, once n are kept: a candidate
// scoring below it is turned away. ok is false while there is room.
func (t TopN) Last() (last Scored, ok bool) {
	k := t.t
	if len(k.xs) < k.n {
		return Scored{}, false
	}
	x := k.xs[k.n-1]
	return Scored{x.seq, x.score}, true
}

// Best returns the candidates kept, best first.
func (t TopN) Best() []Scored {
	out := make([]Scored, len(t.t.xs))
	for i, x := range t.t.xs {
		out[i] = Scored{x.seq, x.score}
	}
	return out
}
