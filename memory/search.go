package memory

import (
	"context"
	"fmt"
	"math"
	"time"
)

// What a search is, for every engine: its limits, the constants of the
// fusion with the measurements behind them, and its methods. Score
// (score.go) applies them; what each engine gathers for it is its own
// (memory/sqlite/search.go, memory/postgres).

// Search limits.
const (
	// recallGranularity is how stale a recorded recall time may get.
	recallGranularity = time.Minute

	DefaultLimit = 10
	MaxLimit     = 100
	// CandidatePool is how many memories each side (lexical, vector)
	// proposes before fusion.
	CandidatePool = 50
)

// Fusion. The candidates are the best exact lexical matches and the
// memories whose vectors lie furthest above the crowd. A candidate scores
//
//	(1-vectorWeight)·lex/bestLex + vectorWeight·clamp(z/vectorFullZ, 0, 1)
//
// where lex is its exact lexical score plus its soft matches (see
// softWeight), bestLex the highest lex among the candidates, and z how many
// standard deviations its cosine lies above the mean cosine of every
// visible memory. Scores lie in [0, 1]; 1 means the best lexical match is
// also an outstanding vector match. Measuring the vector side against all
// visible memories rather than min-max over its own top candidates lets it
// judge its own confidence: a query whose words the embedder barely knows
// lifts nothing out of the crowd, and memories no nearer than average
// (z <= 0) gain nothing.
//
// Measured on both dev sets, recall@5, with the default embedder: the
// MiniLM encoder (memory/embed/minilm), and for comparison the static
// table distilled from it (memory/embed/static), which it replaced:
//
//	go build -o /tmp/acolyte . && /tmp/acolyte bench retrieval \
//	  --corpus coding-dev/corpus.jsonl --queries coding-dev/queries.jsonl --method fused
//
//	                     coding-dev         locomo-dev
//	                     MiniLM  table      MiniLM  table
//	lexical alone        0.862   0.862      0.577   0.577
//	vectors alone        0.866   0.676      0.361   0.406
//	fused, no floor      0.909   0.899      0.620   0.601
//	fused                0.899   0.894      0.610   0.595
//
// Measured again at 7c0b836, after the path stage and the kin changes:
// lexical alone 0.836 and 0.559, vectors alone 0.866 and 0.361, fused
// without floor or tail 0.914 and 0.621, fused 0.899 and 0.618. The floor
// and the tail together now cost coding-dev 0.015, all of it in category
// 3 (0.913 to 0.848: three of 46 questions).
//
// No other encoder a registry ships does better here (bge-small-en-v1.5
// and e5-small-v2, fp32 and int8, through the same fusion and a sweep of
// vectorWeight, vectorFullZ and softWeight): fused 0.878 to 0.895 on
// coding-dev, 0.625 to 0.629 on locomo-dev. They gain where the words
// already find the answer (category 1) and lose on situations (category
// 3), where the words need the vectors most.
//
// Re-fitted for MiniLM on the dev sets, with the floor off (--no-floor):
// vectorWeight 0.2, 0.3, 0.4, 0.5 gave 0.894, 0.899, 0.904, 0.906 on
// coding-dev (with the floor) and 0.614, —, 0.620, 0.614 on LoCoMo; 0.4
// is best on LoCoMo and within 0.002 of best on coding-dev. vectorFullZ 3
// rather than 4 gave 0.909 on coding-dev but let more cross-project
// questions through the floor at the same loss; 6 and 8 gave less. Scoring
// the vector side relative to the best candidate's z-score, as the lexical
// side is scored (relative score fusion), gave 0.904 at 0.4: no better.
// With the table the old weight, 0.2, suited its noisier cosines better;
// the table is now the instant embedder that ranks only until the
// model's vectors are made, so the weights are fitted to the model.
const (
	vectorWeight = 0.4
	vectorFullZ  = 4
)

// The relevance floor. Fused scores are relative to the best candidate,
// so they rank but cannot say whether anything is relevant at all. A
// search text's relevance is what the best candidate would score if the
// lexical side were measured against the text itself rather than against
// the best candidate, taken at the share of the text's words the visible
// memories know at all:
//
//	known · max over candidates of (1-w)·min(1, lex/whole) + w·near
//
// where near is how far the candidate's cosine leads the crowd's (see
// leadNone), whole is the summed IDF of the text's words (a memory holding
// every word exactly scores lex = whole; words no memory holds weigh most,
// so a question about something absent covers little), and known the
// share of the text's words (identifier wholes aside) that some visible
// memory holds or holds a kin of, smoothed by one word (knownShare), and
// w is relevanceVectorWeight. A question asked of the wrong memories shares a few common words with
// them (run, tests, use) and names things they never mention; one asked
// of the right memories may paraphrase its answer but mostly speaks their
// vocabulary. Counting kin at the full weight of their word in lex, rather
// than half, lowered the cross-group empty share at the same cost. A text
// whose relevance lies below relevanceFloor finds nothing. The floor
// applies to fused and lexical searches; vectors alone have no lexical
// side to measure.
//
// The floor and w were calibrated (the table below) with z/vectorFullZ in
// place of near; leadNone was then fitted at the same floor and w.
// Calibrated on both dev sets by asking every question of another group's
// memories (bench retrieval's cross-group run): recall@5 lost on the real
// questions, fused, against the share of cross-group questions that found
// nothing (coding-dev, locomo-dev; the MiniLM encoder, vectorWeight 0.4;
// no floor: 0.909, 0.620):
//
//	w      floor  recall@5 lost    cross-group empty
//	0.4    0.14   0.005  0.000     15%  12%
//	0.4    0.22   0.010  0.010     34%  40%
//	0.2    0.14   0.010  0.002     27%  30%
//	0.12   0.14   0.010  0.002     36%  39%
//	0.1    0.14   0.015  0.002     39%  42%
//	0      0.14   0.028  —         45%  —
//
// w = 0.12 turns the most away within 0.01 lost on both, more than the
// table did at the same floor (36% and 36%, at 0.894 and 0.595), but a
// question of one word that no memory holds is then answered by its
// vector alone too seldom: among thirteen facts, "dog" and "pet" no longer
// find "Caroline adopted a puppy named Biscuit" (TestOneWordFindsItsMeaning),
// which w = 0.2 finds and 0.3 finds for "animal" too. Finding by meaning is
// what the vectors are for, so w = 0.2, the table's weight, at 27% and 30%
// empty.
//
// A floor above 0.14 turns away the small store's question below, whose
// relevance is lexical (0.14 to 0.15 with this store's six rules), so the
// floor stays and the vector side's say in relevance is what was fitted:
// MiniLM's z-scores lift a neighbouring rule out of the crowd more
// readily than the table's, right or wrong, so at the ranking's weight
// they let a question asked of the wrong project through. With the static
// table (w = vectorWeight = 0.2) the floor of 0.14 left 36% and 36% empty
// at 0.005 and 0.000 lost; with GloVe vectors before it, 0.11 was the
// floor within 0.01 lost, at 28% and 28% empty. Without the known factor,
// the best floor within 0.01 lost (0.2, with GloVe) left 28% and 20%
// empty. Unsmoothed (known/asked), 0.1 left 30% and 36% at the same cost
// (GloVe), but a store of six rules lost "which formatter does the project
// use?" (it knows one word of three), and a small store is where every
// user starts. Other measures tried alone, each at its best floor within
// 0.01 lost: the best vector z-score (1% and 4% empty), the best lexical
// score's lead over the fifth (8%, 4%), the best exact coverage (11%, 56%:
// each set needs its own floor).
//
// Without a vector for the text (no embedder, or none of its words known)
// the vector side's share is missing rather than zero, and relevance is
// min(1, lex/whole) alone; without a word to look for (only stop words)
// it is near alone.
//
// The goal of 80% empty at 0.01 lost is not met: many coding questions
// asked of another project find rules that do answer them (how to name
// tests, which package manager), and a bi-encoder's cosine cannot tell a
// paraphrase of the answer from a rule on the same subject.
const (
	relevanceFloor        = 0.14
	relevanceVectorWeight = 0.2
)

// The vector side's say in relevance is how far the best candidate's
// cosine leads the crowd's mean cosine with the text (lead = z·spread),
// from nothing at leadNone to all at leadFull:
//
//	clamp((lead - leadNone) / (leadFull - leadNone), 0, 1)
//
// It was z/vectorFullZ, the lead in standard deviations. But the largest
// of n cosines lies further above the crowd the larger the crowd (about
// √(2 ln n) deviations by chance alone), so in a conversation of 550 turns
// a question asked of the wrong one found a memory as many deviations out
// as the right one did (median best z 3.3 against 3.0 on locomo-dev). The
// lead in cosine does not grow with the crowd: at the 1st percentile of the
// right group's questions it alone turns away 18% of coding-dev's and 66%
// of locomo-dev's questions asked of the wrong group, where z turned away
// 5% and 0%. A one-word question leads its answer by about 0.2 ("dog" and
// "Caroline adopted a puppy named Biscuit": 0.25 above a mean of 0.05), a
// clear topical match by 0.3 or more ("camping" and Melanie's camping
// trip: 0.39).
//
// Measured as at relevanceFloor (w, leadNone, leadFull; recall@5 and
// cross-group empty, coding-dev then locomo-dev):
//
//	z/vectorFullZ (before)  0.899 0.618   26.5% 30.0%
//	0.2  0.10 0.30 (chosen) 0.899 0.619   29.1% 46.6%
//	0.2  0.12 0.30          0.899 0.619   31.6% 49.1%
//	0.25 0.10 0.30          0.899 0.620   25.5% 41.0%
//	0.3  0.15 0.32          0.899 0.620   31.1% 52.1%
//	0.2  0.10 0.40          0.899 0.617   39.3% 55.0%
//	0.3  0.20 0.30          0.894 0.619   38.8% 58.8%
//
// The last three rows turn away a question users expect answered: a
// one-word question (TestOneWordFindsItsMeaning), one of a store that
// knows one word of three ("which formatter does the project use?"), or
// one asked of 50k memories of one template
// (TestNearFindsDuplicatesAmong50k), where every memory is about the same
// thing and none leads the crowd by much. leadNone 0.12 still passes them,
// 0.14 and a leadFull of 0.32 do not, so 0.1 keeps a margin. The figures are MiniLM's; the static table's cosines lead by
// about as much, and another embedder's may not.
const (
	leadNone = 0.1
	leadFull = 0.3
)

// Soft matches. A query word a memory does not hold still earns part of its
// IDF when the memory's vector lies near the word's own vector:
//
//	softWeight·idf·clamp(z/softFullZ, 0, 1)
//
// with z the standard deviations that cosine lies above the visible
// memories' mean (estimated from SoftSample of them). Exact words decide
// what a memory is about; this lets "camping" credit a memory about a
// campfire and a tent, and gives words no memory holds (typos, other
// inflections, synonyms) a say. An implied word never counts more than
// half a held one. Only the candidates are scored, so the cost is one dot
// product per candidate and word, plus SoftSample per word.
//
// On the same benchmark, fused recall@5 by the credit per unit of z
// (softWeight/softFullZ): 0 0.585, 1/32 0.596, 1/16 0.602, 1/12 0.604,
// 1/8 0.600, 1/4 0.565; the cap hardly matters below 1/8. Keeping words no
// memory holds is worth 0.004 (0.598 without them). Restricting the soft
// scores to the candidates cost nothing against scoring every memory, and
// estimating the crowd from 64, 128, 512 or all memories gave 0.605,
// 0.601, 0.601, 0.602. p50 search latency 3.5 ms (2.7 ms before soft
// matches, on a shared machine); BenchmarkSearch at 10k memories rose by
// under 1 ms.
const (
	softWeight = 0.5
	softFullZ  = 8
	SoftSample = 512
)

// KinWeight is the share of a word's IDF that a memory holding only a kin
// of the word earns (see kinTerm): like a soft match, an implied word
// counts at most half a held one.
//
// Kin are looked up only for words held by at most KinMaxHeld memories:
// reading the postings of a common word's stem again costs about 0.35 µs
// per memory (a word in 800 of 10k memories: 0.3 ms), and a word many
// memories hold ranks them already while its kin's family IDF is low.
const (
	KinWeight  = 0.5
	KinMaxHeld = 200
)

// tailShare is the share of the best result's score below which a result
// is left out: a search whose answer is one memory should not bring back
// the next nine, which cost the model tokens and bury the answer. Fused
// scores are relative to the best candidate (see vectorWeight), so a share
// of the best is a measure of how far behind a result lies. NoFloor keeps
// the tail too.
//
// Measured as bench retrieval's mean results per query (of at most 10)
// and recall@5, coding-dev then locomo-dev:
//
//	share  results       recall@5
//	0      9.8  10.0     0.894  0.601
//	0.3    8.1   9.3     0.894  0.601
//	0.4    6.4   8.0     0.894  0.595
//	0.5    —     —       0.877  0.588
//
// 0.4 is the largest round share within 0.01 lost on both. Measured again
// on coding-dev with the MiniLM encoder: 0 gave 9.8 results and 0.904,
// 0.3 8.4 and 0.904, 0.4 6.3 and 0.899, 0.5 4.3 and 0.886, so 0.4 stays.
const tailShare = 0.4

// pathFloor is where a path-scoped search (Query.Paths) puts the memories
// whose own globs name a file at hand (a glob other than AlwaysGlob
// matches it): a fused score s becomes
//
//	pathFloor + (1-pathFloor)·s
//
// so each keeps its order by meaning among them, and one that meaning did
// not find at all still scores pathFloor: a rule for migrations/** applies
// to a migration whatever the question's words. Memories without globs,
// and those whose globs match none of the files, keep their score, and
// those that apply only through AlwaysGlob (Cursor's alwaysApply) score
// from alwaysFloor, since the file at hand says nothing about them. Both
// are at least tailShare, so that the tail never cuts an applicable
// memory; only the limit does
// (TestPathFloorKeepsApplicableMemoriesAboveTheTail).
//
// README and search --help promise that the rules for the file at hand
// rank first, and they do against any memory that merely shares the
// question's words (issue 36: "The on-call rota lives in PagerDuty" at
// 0.845 above the rule for web/components/** at 0.5, for "where do styles
// live" with Button.tsx at hand; "Write commit messages in the imperative
// mood" above the rule for migrations/** for "how should I write this").
// By vectorWeight's formula a memory found by its words alone scores at
// most 1-vectorWeight, and the vector side adds vectorWeight at z =
// vectorFullZ. pathFloor is the best word match whose vector lies three
// quarters of vectorFullZ (3 standard deviations) nearer the question than
// the crowd: an unscoped memory outranks a rule for the file only when it
// is the question's best word match and an outstanding match by meaning as
// well. That is the minimum relevance by which something unscoped still
// comes first, and nothing is lifted above the rules for the file by its
// words alone, nor by words and a fair likeness: with MiniLM, "Write
// commit messages in the imperative mood" scored 0.821 for "how should I
// write this" (z 2.2), above a floor at half of vectorFullZ (0.8). It is
// derived from vectorWeight, so a re-fit of the fusion keeps its meaning.
//
// Measured on the dev split of internal/bench/testdata/path-scoped (48
// questions that name a file, in four projects' rules) with MiniLM
// (vectorWeight 0.4), fused recall@5, nDCG@5 and MRR, with category 2 (the
// answer applies everywhere or has no globs) in brackets:
//
//	one floor of 0.5 for every applicable memory (before)  0.938 (0.750)  0.894  0.881
//	pathFloor 0.6, the words-only maximum                   0.938 (0.750)  0.894  0.881
//	pathFloor 0.8, half of vectorFullZ                      0.938 (0.750)  0.891  0.875
//	pathFloor 0.9, three quarters (chosen)                  0.938 (0.750)  0.876  0.854
//	  with the tail measured from the words-only best        0.938 (0.750)  0.876  0.860
//	pathFloor 0.95                                          0.938 (0.750)  0.850  0.819
//	pathFloor 0.99, nearly the rules strictly first         0.938 (0.750)  0.827  0.788
//
// Recall holds at every floor; MRR falls as a few unscoped answers come
// right after the rules for the file instead of before them. The held-out
// test split, run once after the choice: recall@5 0.969 (0.909) before and
// after, nDCG@5 0.870 to 0.818, MRR 0.837 to 0.767. With the static table
// (vectorWeight 0.2) the same choice was 0.95: dev MRR 0.870 to 0.828.
// Lifting AlwaysGlob memories as high costs recall (one floor of 0.85 for
// every applicable memory lost a category 2 answer with the static table):
// a rule for every file is no answer to this question because of the file,
// and alwaysFloor keeps them below a best words-only match. A path-scoped
// search's tail is measured from the words-only best (see AboveTail), or
// the rules lifted by their globs would cut the memories that answer by
// meaning.
const (
	pathFloor   = 1 - vectorWeight/4
	alwaysFloor = 0.5
)

// AboveTail returns how many of n results, sorted best first, q keeps:
// those whose score(i) reaches tailShare of the first's (see tailShare),
// or all of them when q asks for no floor or for vectors alone, whose
// cosines have no lexical side to lie behind.
func AboveTail(q Query, n int, score func(i int) float64) int {
	if q.NoFloor || q.Method == MethodVector || n == 0 {
		return n
	}
	top := score(0)
	if len(q.Paths) > 0 {
		// The path stage lifts the rules for the files at hand to
		// pathFloor by their globs, not by how well they answer: measured
		// from there, the tail would drop the memories that answer by
		// meaning. It is measured from the best a memory can score by its
		// words alone at most.
		top = min(top, 1-vectorWeight)
	}
	for i := 1; i < n; i++ {
		if score(i) < tailShare*top {
			return i
		}
	}
	return n
}

// Method is the evidence a search weighs.
type Method string

// Methods. Lexical and vector alone exist to measure each side.
const (
	MethodFused   Method = ""
	MethodLexical Method = "lexical"
	MethodVector  Method = "vector"
)

// ParseMethod reads a Method by name: fused, lexical or vector.
func ParseMethod(name string) (Method, error) {
	switch name {
	case "fused", "":
		return MethodFused, nil
	case "lexical", "vector":
		return Method(name), nil
	}
	return "", fmt.Errorf("search method %q: use fused, lexical or vector", name)
}

// idfMinMemories is the smallest store termIDF (fusion.go) assumes. It
// uses the form Lucene gives BM25, which never falls to zero: Robertson's
// log((n-df+0.5)/(df+0.5)) is zero or less for a word in half the
// memories. A handful of memories cannot tell how rare a word is, so they
// count as part of a store of at least this many: in a store of one memory
// its words would otherwise weigh a fifth of a word it lacks, and a
// question about that memory would cover too little of it to pass the
// relevance floor. Only smaller stores change: on coding-dev, whose groups
// hold 88 to 141 memories, recall@5 stayed 0.876 and the cross-group empty
// share went from 28.1% to 27.6%.
const idfMinMemories = 100

// MeanDeviation returns the mean and standard deviation of xs: the crowd
// a z-score is measured against.
func MeanDeviation(xs []float32) (mean, spread float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += float64(x)
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		d := float64(x) - mean
		spread += d * d
	}
	return mean, math.Sqrt(spread / float64(len(xs)))
}

// Scoped is a Toolkit over a local store alone, for memories outside any
// repository (user and session scope).
type Scoped struct {
	Store LocalEngine
	Visibility
	// Guard, when set, refuses every draft and edit that holds a secret,
	// unless the user allowed it for a user memory. cmd always sets it;
	// tests of the store alone leave it nil.
	Guard Guard
}

// RefuseSecret is Guard, or nil without one.
func (t Scoped) RefuseSecret(m Memory) error {
	if t.Guard == nil {
		return nil
	}
	return t.Guard(m)
}

func (t Scoped) Search(ctx context.Context, q Query) ([]Result, error) {
	return t.Store.Search(ctx, t.Visibility, q)
}

func (t Scoped) Add(ctx context.Context, d Draft) (Added, error) {
	if !d.SecretAllowed() {
		if err := t.RefuseSecret(d.Memory()); err != nil {
			return Added{}, err
		}
	}
	return t.Store.Add(ctx, t.Visibility, d)
}

// Remove deletes memories by id, but only ones visible from here.
func (t Scoped) Remove(ctx context.Context, ids ...string) ([]Memory, error) {
	return t.Store.Delete(ctx, t.Visibility, ids...)
}

func (t Scoped) List(ctx context.Context, f Filter) ([]Memory, error) {
	return t.Store.List(ctx, t.Visibility, f)
}

// Edit revises a memory visible from here.
func (t Scoped) Edit(ctx context.Context, id string, r Revision) (Memory, error) {
	m, err := t.Store.Get(ctx, t.Visibility, id)
	if err != nil {
		return Memory{}, err
	}
	if !(r.AllowSecret && m.Scope == ScopeUser) {
		if err := t.RefuseSecret(r.Revised(m)); err != nil {
			return Memory{}, err
		}
	}
	if m, err = t.Store.Revise(m, r); err != nil {
		return Memory{}, err
	}
	_, err = t.Store.Put(ctx, m)
	return m, err
}

// CanSee reports whether m is visible from v.
func (v Visibility) CanSee(m Memory) bool {
	switch m.Scope {
	case ScopeUser:
		return true
	case ScopeProject:
		return m.ScopeKey != "" && m.ScopeKey == v.ProjectKey
	case ScopeSession:
		return m.ScopeKey != "" && m.ScopeKey == v.SessionKey
	case ScopeTeam:
		return m.ScopeKey != "" && m.ScopeKey == v.Team
	}
	return false
}
