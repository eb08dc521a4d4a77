package memory

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Search limits.
const (
	// recallGranularity is how stale a recorded recall time may get.
	recallGranularity = time.Minute

	DefaultLimit = 10
	MaxLimit     = 100
	// candidatePool is how many memories each side (lexical, vector)
	// proposes before fusion.
	candidatePool = 50
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
// Measured on the LoCoMo dev split (996 queries) with the static embedder:
//
//	go build -o /tmp/acolyte . && /tmp/acolyte bench retrieval \
//	  --corpus locomo-dev/corpus.jsonl --queries locomo-dev/queries.jsonl
//
//	                              recall@5  nDCG@5  MRR
//	lexical alone (exact)         0.573     0.496   0.504
//	lexical with soft matches     0.592     0.504   0.510
//	vectors alone                 0.338     0.258   0.262
//	fused, exact lexical          0.585     0.499   0.504
//	fused, with soft matches      0.601     0.508   0.508
//
// With soft matches, vectorWeight 0.1/0.2/0.3 gives 0.599/0.602/0.601 and
// vectorFullZ 3/4/6 0.601/0.602/0.605, so the round values stay.
const (
	vectorWeight = 0.2
	vectorFullZ  = 4
)

// The relevance floor. Fused scores are relative to the best candidate,
// so they rank but cannot say whether anything is relevant at all. A
// search text's relevance is what the best candidate would score if the
// lexical side were measured against the text itself rather than against
// the best candidate, taken at the share of the text's words the visible
// memories know at all:
//
//	known · max over candidates of (1-vectorWeight)·min(1, lex/whole) + vectorWeight·clamp(z/vectorFullZ, 0, 1)
//
// where whole is the summed IDF of the text's words (a memory holding
// every word exactly scores lex = whole; words no memory holds weigh most,
// so a question about something absent covers little), and known the
// share of the text's words (identifier wholes aside) that some visible
// memory holds or holds a kin of, smoothed by one word (knownShare). A
// question asked of the wrong memories shares a few common words with
// them (run, tests, use) and names things they never mention; one asked
// of the right memories may paraphrase its answer but mostly speaks their
// vocabulary. Counting kin at the full weight of their word in lex, rather
// than half, lowered the cross-group empty share at the same cost. A text
// whose relevance lies below relevanceFloor finds nothing. The floor
// applies to fused and lexical searches; vectors alone have no lexical
// side to measure.
//
// Calibrated on both dev sets by asking every question of another group's
// memories (bench retrieval's cross-group run): recall@5 lost on the real
// questions, fused, against the share of cross-group questions that found
// nothing (coding-dev, locomo-dev; static embedder; no floor: 0.893,
// 0.6055):
//
//	floor  recall@5 lost    cross-group empty
//	0.10   0.010  0.000     22%  23%
//	0.11   0.010  0.000     28%  28%
//	0.12   0.010  0.002     35%  34%
//	0.14   0.023  0.005     43%  46%
//
// Without the known factor, the best floor within 0.01 lost (0.2) left
// 28% and 20% empty. Unsmoothed (known/asked), 0.1 left 30% and 36% at
// the same cost, but a store of six rules lost "which formatter does the
// project use?" (it knows one word of three), and a small store is where
// every user starts. Other measures tried alone, each at its best floor
// within 0.01 lost: the best vector z-score (1% and 4% empty), the best
// lexical score's lead over the fifth (8%, 4%), the best exact coverage
// (11%, 56%: each set needs its own floor).
//
// Without a vector for the text (no embedder, or none of its words known)
// the vector side's share is missing rather than zero, and relevance is
// min(1, lex/whole) alone; without a word to look for (only stop words)
// it is clamp(z/vectorFullZ, 0, 1) alone.
//
// The goal was at most 0.01 lost, and LoCoMo's recall@5 not below 0.604
// (its figure with the floor before): 0.11 meets both; 0.12 costs LoCoMo
// 0.0005 more. A stricter floor needs a better measure of relevance than
// the words and the static embedder give: many coding questions asked of
// another project find rules that do answer them (how to name tests,
// which package manager), and situational questions share few words with
// their answers (the two real questions 0.10 already loses know one word
// in four, or none).
const relevanceFloor = 0.11

// Soft matches. A query word a memory does not hold still earns part of its
// IDF when the memory's vector lies near the word's own vector:
//
//	softWeight·idf·clamp(z/softFullZ, 0, 1)
//
// with z the standard deviations that cosine lies above the visible
// memories' mean (estimated from softSample of them). Exact words decide
// what a memory is about; this lets "camping" credit a memory about a
// campfire and a tent, and gives words no memory holds (typos, other
// inflections, synonyms) a say. An implied word never counts more than
// half a held one. Only the candidates are scored, so the cost is one dot
// product per candidate and word, plus softSample per word.
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
	softSample = 512
)

// kinWeight is the share of a word's IDF that a memory holding only a kin
// of the word earns (see kinTerm): like a soft match, an implied word
// counts at most half a held one.
//
// Kin are looked up only for words held by at most kinMaxHeld memories:
// reading the postings of a common word's stem again costs about 0.35 µs
// per memory (a word in 800 of 10k memories: 0.3 ms), and a word many
// memories hold ranks them already while its kin's family IDF is low.
const (
	kinWeight  = 0.5
	kinMaxHeld = 200
)

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

// Search finds the memories visible from vis that best match q, fusing
// IDF-weighted word matches over the lexical index with cosine similarity
// over the stored vectors.
func (s *Store) Search(ctx context.Context, vis Visibility, q Query) ([]Result, error) {
	texts, err := q.Texts()
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)

	var topicSeqs map[int64]bool
	if q.Topic != "" {
		var err error
		if topicSeqs, err = s.seqsWithTopic(ctx, q.Topic); err != nil {
			return nil, err
		}
	}
	gen, err := s.generation(ctx)
	if err != nil {
		return nil, err
	}
	// The distinct words of each text, and of all texts together: each
	// word's own vector feeds the soft matches.
	terms := make([][]string, len(texts))
	var words []string
	for i, text := range texts {
		terms[i] = QueryWords(text)
		for _, w := range terms[i] {
			if !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}

	// The vector side (the catalog, the query's vectors, a cosine for every
	// visible memory) needs no SQL when the saved catalog is current, so it
	// runs beside the lexical lookups, which do: SQLite answers one
	// statement at a time on this connection. A remote embedder's round
	// trip overlaps them too.
	saved := make(chan *vectorSide, 1)
	go func() {
		c := s.savedCatalog(gen)
		if c == nil {
			saved <- nil
			return
		}
		saved <- s.vectorSide(ctx, c, vis, q.Filter, topicSeqs, texts, words)
	}()
	// Kin rescue the words that few memories hold (see kinMaxHeld). An
	// identifier's whole has none of its own: its parts have them.
	postings := make([][][]int64, len(texts))
	kin := make([][][]int64, len(texts))
	for i, text := range texts {
		postings[i] = make([][]int64, len(terms[i]))
		kin[i] = make([][]int64, len(terms[i]))
		wholes := identifierWholes(text)
		for j, w := range terms[i] {
			if postings[i][j], err = s.postings(ctx, w); err != nil {
				break
			}
			if q.Method == MethodVector || len(postings[i][j]) > kinMaxHeld || slices.Contains(wholes, w) {
				continue
			}
			if kin[i][j], err = s.kinPostings(ctx, w); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
		// A memory that writes two adjacent words of the text as one
		// ("codepaths" for "code paths") holds both: the joined word's
		// memories count as holding each part exactly.
		looked := 0
		for _, p := range wordPairs(text) {
			a, b := slices.Index(terms[i], p[0]), slices.Index(terms[i], p[1])
			if a < 0 || b < 0 {
				continue
			}
			if looked++; looked > maxQueryTerms {
				break // the same bound as the words themselves
			}
			var joined []int64
			if joined, err = s.postings(ctx, p[0]+p[1]); err != nil {
				break
			}
			postings[i][a] = append(postings[i][a], joined...)
			postings[i][b] = append(postings[i][b], joined...)
		}
		if err != nil {
			break
		}
	}
	side := <-saved
	if side != nil {
		defer s.releaseCatalog(side.view.c)
	}
	if err != nil {
		return nil, err
	}
	if side == nil {
		c, err := s.rebuildCatalog(ctx)
		if err != nil {
			return nil, err
		}
		defer s.releaseCatalog(c)
		side = s.vectorSide(ctx, c, vis, q.Filter, topicSeqs, texts, words)
	}

	v := side.view
	best := map[int64]float64{}
	for i := range texts {
		lex := lexical(terms[i], postings[i], kin[i], v)
		asked, known := 0, 0
		for t := range lex.terms {
			if !slices.Contains(identifierWholes(texts[i]), lex.terms[t].word) {
				lex.whole += lex.terms[t].idf
				asked++
				if len(lex.terms[t].held) > 0 {
					known++
				}
			}
		}
		lex.known = knownShare(known, asked)
		switch q.Method {
		case MethodLexical:
			side.cosines[i], side.wordVecs = nil, nil
		case MethodVector:
			lex = lexicalMatch{exact: make([]float64, len(v.c.seqs))}
		}
		if side.wordVecs != nil {
			for t := range lex.terms {
				lex.terms[t].vec = side.wordVecs[slices.Index(words, lex.terms[t].word)]
			}
		}
		scores, relevance := fuse(lex, side.cosines[i], v)
		if relevance < relevanceFloor && !q.NoFloor && q.Method != MethodVector {
			continue // nothing this text asks about is here
		}
		for seq, score := range scores {
			if score > best[seq] {
				best[seq] = score
			}
		}
	}

	ranked := make([]int64, 0, len(best))
	for seq := range best {
		ranked = append(ranked, seq)
	}
	sort.Slice(ranked, func(i, j int) bool {
		if best[ranked[i]] != best[ranked[j]] {
			return best[ranked[i]] > best[ranked[j]]
		}
		return ranked[i] < ranked[j]
	})
	if len(ranked) > limit {
		ranked = ranked[:limit]
	}
	return s.results(ctx, ranked, best)
}

// vectorSide is what the stored vectors say about one search.
type vectorSide struct {
	view *view
	// cosines[i] holds the cosine between text i's vector and each memory
	// of view.withVec, in that order; nil when the text has no vector.
	cosines [][]float32
	// wordVecs holds each query word's vector, in the order of the words;
	// nil when the embedder gave none.
	wordVecs [][]float32
}

func (s *Store) vectorSide(ctx context.Context, c *catalog, vis Visibility, f Filter, topicSeqs map[int64]bool, texts, words []string) *vectorSide {
	v := c.view(vis, f, topicSeqs)
	side := &vectorSide{view: v, cosines: make([][]float32, len(texts))}
	// Without a vector for the query the search is still useful: lexical
	// only. An embedder that learns its dimension from its first answer is
	// asked anyway, so that its vectors can be found next time.
	if s.embedder == nil || (len(v.withVec) == 0 && s.embedder.Dim() != 0) {
		return side
	}
	vecs, err := s.embedder.Embed(ctx, PurposeQuery, append(slices.Clone(texts), words...))
	if err != nil || len(vecs) != len(texts)+len(words) {
		return side
	}
	side.wordVecs = vecs[len(texts):]
	for i := range texts {
		side.cosines[i] = cosines(vecs[i], c, v.withVec)
	}
	return side
}

// scored is one candidate's raw score on one side.
type scored struct {
	seq   int64
	score float64
}

// queryTerm is one distinct word of a search text.
type queryTerm struct {
	word string
	idf  float64
	// held lists the catalog positions of the visible memories whose
	// lexical index holds the word.
	held []int
	// vec is the word's own vector, when the embedder knows it.
	vec []float32
}

// lexicalMatch is what the lexical index says about one search text.
type lexicalMatch struct {
	terms []queryTerm
	// exact is the summed IDF of the words each memory holds, by catalog
	// position.
	exact []float64
	// top are the best exact matches, best first (seq and score).
	top []scored
	// whole is the summed IDF of the text's words, identifier wholes
	// aside: what a memory holding every word would score exactly.
	whole float64
	// known is the share of those words that some visible memory holds
	// or holds a kin of (see knownShare).
	known float64
}

// lexical scores every visible memory by which of a text's words it holds;
// postings[j] are the seqs FTS5 found for words[j] (after Porter
// stemming). The scoring happens here, over the catalog, because SQLite's
// bm25() costs microseconds per match.
//
// A memory scores the summed IDF of the query words it holds: BM25 with
// the term frequency taken as one and no length normalisation (b = 0).
// Memories are single facts, so a word rarely repeats within one, and
// measured on the LoCoMo dev split recall@5 rose steadily as b fell (0.4:
// 0.576, 0.2: 0.577, 0: 0.585, fused), because a longer fact is not a
// weaker match. Word weights come from the memories this search can see,
// so a word common in one project is not rare because other projects
// lack it. A word no memory holds gets the IDF of a document frequency of
// zero: it scores nothing exactly, but weighs most among the soft matches
// (see softWeight), where it is most needed.
//
// A memory that lacks a word but holds one of its kin (see kinTerm) earns
// kinWeight of the IDF of the word and its kin taken together: "lint"
// finds "linter", "authenticate" finds "Auth", at half the weight of the
// word itself, as with soft matches.
func lexical(words []string, postings, kin [][]int64, v *view) lexicalMatch {
	var m lexicalMatch
	if v.count == 0 {
		return m
	}
	m.exact = make([]float64, len(v.c.seqs))
	var matched []int
	n := float64(v.count)
	for j, w := range words {
		held := make([]int, 0, len(postings[j]))
		for _, seq := range postings[j] {
			// A memory written after the catalog was read is not in it; the
			// next search sees it.
			if i := v.c.index(seq); i >= 0 && v.visible[i] {
				held = append(held, i)
			}
		}
		slices.Sort(held)
		held = slices.Compact(held)
		var near []int
		for _, seq := range kin[j] {
			if i := v.c.index(seq); i >= 0 && v.visible[i] {
				if _, holds := slices.BinarySearch(held, i); !holds {
					near = append(near, i)
				}
			}
		}
		slices.Sort(near)
		near = slices.Compact(near)
		idf := termIDF(n, float64(len(held)))
		for _, i := range held {
			if m.exact[i] == 0 {
				matched = append(matched, i)
			}
			m.exact[i] += idf
		}
		if len(near) > 0 {
			family := kinWeight * termIDF(n, float64(len(held)+len(near)))
			for _, i := range near {
				if m.exact[i] == 0 {
					matched = append(matched, i)
				}
				m.exact[i] += family
			}
			// Kin count as held: they earn no soft match on top.
			held = append(held, near...)
			slices.Sort(held)
		}
		m.terms = append(m.terms, queryTerm{word: w, idf: idf, held: held})
	}
	top := newTopN(candidatePool)
	for _, i := range matched {
		top.push(scored{v.c.seqs[i], m.exact[i]})
	}
	m.top = top.xs
	return m
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

// best returns the n highest scores, best first, ties by seq.
func best(xs []scored, n int) []scored {
	t := newTopN(n)
	for _, x := range xs {
		t.push(x)
	}
	return t.xs
}

// topN keeps the n highest scores pushed so far, best first, ties by seq,
// in a window of n: a common word can match thousands of memories, and
// half of all memories lie above the mean cosine, so the losers are never
// stored or sorted.
type topN struct {
	n  int
	xs []scored
}

func newTopN(n int) *topN { return &topN{n: n, xs: make([]scored, 0, n+1)} }

func (t *topN) push(x scored) {
	better := func(a, b scored) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.seq < b.seq
	}
	if len(t.xs) == t.n && !better(x, t.xs[t.n-1]) {
		return
	}
	i := sort.Search(len(t.xs), func(i int) bool { return better(x, t.xs[i]) })
	t.xs = append(t.xs, scored{})
	copy(t.xs[i+1:], t.xs[i:])
	t.xs[i] = x
	if len(t.xs) > t.n {
		t.xs = t.xs[:t.n]
	}
}

// postings returns the seqs of the memories whose lexical index holds
// word (after FTS5's stemming), visible or not. SQLite joins the rowids
// into one string: a common word matches thousands of memories, and one
// row each through database/sql cost a microsecond apiece, twice what
// parsing the string does.
func (s *Store) postings(ctx context.Context, word string) ([]int64, error) {
	return s.match(ctx, "body : "+ftsPhrase(word))
}

// ftsPhrase quotes a word as an FTS5 phrase.
func ftsPhrase(w string) string { return `"` + strings.ReplaceAll(w, `"`, `""`) + `"` }

// match returns the seqs of the memories that match an FTS5 query.
func (s *Store) match(ctx context.Context, query string) ([]int64, error) {
	var list sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT group_concat(rowid) FROM memories_fts WHERE memories_fts MATCH ?`, query).Scan(&list)
	if err != nil {
		return nil, s.explain(fmt.Errorf("lexical search: %w", err))
	}
	var seqs []int64
	for field := range strings.SplitSeq(list.String, ",") {
		if field == "" {
			continue
		}
		seq, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("lexical search: rowid %q: %w", field, err)
		}
		seqs = append(seqs, seq)
	}
	return seqs, nil
}

// kinPostings returns the seqs of the memories whose lexical index holds a
// kin of word but not the word, visible or not: a kin (see kinQuery) in
// the body, or the word's derivational base (the word itself when it has
// none) in the body or among the memory's forms (see ftsForms). One FTS5 query finds them all; listing the index's terms
// through an fts5vocab table instead cost a quarter of a millisecond per
// word at 10k memories even when the range held no term.
func (s *Store) kinPostings(ctx context.Context, word string) ([]int64, error) {
	var alts []string
	if q := kinQuery(word); q != "" {
		alts = append(alts, "body : ("+q+")")
	}
	if b := derivationalBase(word); b != "" {
		alts = append(alts, ftsPhrase(b))
	} else if isASCII(word) && len(word) >= minKin {
		alts = append(alts, "forms : "+ftsPhrase(word))
	}
	if len(alts) == 0 {
		return nil, nil
	}
	// The memories that hold the word itself are known already; leaving
	// them out here saves joining and parsing their rowids again.
	return s.match(ctx, "("+strings.Join(alts, " OR ")+") NOT body : "+ftsPhrase(word))
}

// quantize stores a unit vector as a float32 scale and one signed byte per
// dimension: a quarter of the space of float32, and cosine changes by well
// under 1%.
func quantize(v []float32) []byte {
	var peak float32
	for _, x := range v {
		peak = max(peak, float32(math.Abs(float64(x))))
	}
	out := make([]byte, 4+len(v))
	scale := float32(0)
	if peak > 0 {
		scale = peak / 127
	}
	binary.LittleEndian.PutUint32(out, math.Float32bits(scale))
	for i, x := range v {
		if scale > 0 {
			out[4+i] = byte(int8(math.Round(float64(x / scale))))
		}
	}
	return out
}

// cosines returns the cosine between query and the vector of each catalog
// position in at, in that order, or nil when the query's dimension is not
// the catalog's.
func cosines(query []float32, c *catalog, at []int32) []float32 {
	if len(query) != c.dim {
		return nil
	}
	out := make([]float32, len(at))
	for j, i := range at {
		k := c.vecAt[i]
		out[j] = dot8(query, c.vector(k)) * c.scales[k]
	}
	return out
}

// fuse scores the candidates of one search text, as described at
// vectorWeight: the best exact lexical matches and the memories whose
// vectors lie furthest above the crowd. Memories that score 0 are left out.
// It also returns the text's relevance, as described at relevanceFloor.
func fuse(lex lexicalMatch, cos []float32, v *view) (map[int64]float64, float64) {
	candidates := make(map[int64]float64, len(lex.top)+candidatePool)
	for _, c := range lex.top {
		candidates[c.seq] = 0
	}
	mean, spread := meanDeviation(cos)
	if spread > 0 {
		// A spread of 0 means every memory is equally near (or the query
		// has no vector): the vector side knows nothing.
		proposals := newTopN(candidatePool)
		for j, i := range v.withVec {
			z := (float64(cos[j]) - mean) / spread
			if z <= 0 {
				continue
			}
			seq := v.c.seqs[i]
			if _, lexical := candidates[seq]; lexical {
				candidates[seq] = z
			} else {
				proposals.push(scored{seq, z})
			}
		}
		for _, c := range proposals.xs {
			candidates[c.seq] = c.score
		}
	}

	lexScore := make(map[int64]float64, len(candidates))
	bestLex := 0.0
	soft := softMatcher(lex.terms, v)
	for seq := range candidates {
		i := v.c.index(seq)
		score := lex.exact[i] + soft(i)
		lexScore[seq] = score
		bestLex = max(bestLex, score)
	}
	out := make(map[int64]float64, len(candidates))
	relevance := 0.0
	for seq, z := range candidates {
		score := fusedScore(lexScore[seq], bestLex, z)
		relevance = max(relevance, candidateRelevance(lexScore[seq], lex.whole, z, spread > 0))
		if score > 0 {
			out[seq] = score
		}
	}
	return out, relevance * lex.known
}

// softMatcher returns the soft-match credit of the memory at a catalog
// position, as described at softWeight.
func softMatcher(terms []queryTerm, v *view) func(i int) float64 {
	type wordStats struct {
		term         *queryTerm
		mean, spread float64
	}
	c := v.c
	var words []wordStats
	if len(v.withVec) > 0 {
		// Every memory's cosine with every word would cost a pass over the
		// vectors per word; a fixed, evenly spread sample tells how near
		// the crowd lies closely enough.
		step := (len(v.withVec) + softSample - 1) / softSample
		sample := make([]int32, 0, softSample)
		for j := 0; j < len(v.withVec); j += step {
			sample = append(sample, v.withVec[j])
		}
		for t := range terms {
			if terms[t].vec == nil {
				continue
			}
			// A word vector of the wrong size has no cosines, so no spread,
			// and is never compared.
			mean, spread := meanDeviation(cosines(terms[t].vec, c, sample))
			if spread > 0 {
				words = append(words, wordStats{&terms[t], mean, spread})
			}
		}
	}
	return func(i int) float64 {
		at := c.vecAt[i]
		if at < 0 || len(words) == 0 {
			return 0
		}
		q := c.vector(at)
		credit := 0.0
		for _, w := range words {
			if _, holds := slices.BinarySearch(w.term.held, i); holds {
				continue
			}
			credit += softCredit(w.term.idf, (float64(dot8(w.term.vec, q)*c.scales[at])-w.mean)/w.spread)
		}
		return credit
	}
}

// meanDeviation returns the mean and standard deviation of xs.
func meanDeviation(xs []float32) (mean, spread float64) {
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

// results loads the ranked memories and marks them recalled.
func (s *Store) results(ctx context.Context, ranked []int64, scores map[int64]float64) ([]Result, error) {
	if len(ranked) == 0 {
		return []Result{}, nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(ranked)), ",")
	args := make([]any, len(ranked))
	for i, seq := range ranked {
		args[i] = seq
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE m.seq IN (`+marks+`)`, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	bySeq := map[int64]Memory{}
	for rows.Next() {
		seq, m, err := scanMemory(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		bySeq[seq] = m
	}
	rows.Close()
	// A read that stopped early (I/O, a cancelled search) must not pass for
	// memories that vanished between ranking and reading.
	if err := rows.Err(); err != nil {
		return nil, s.explain(err)
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	out := make([]Result, 0, len(ranked))
	stale := false
	for _, seq := range ranked {
		if m, ok := bySeq[seq]; ok {
			stale = stale || m.RecalledAt.Before(now.Add(-recallGranularity))
			m.RecalledAt = now
			out = append(out, Result{Memory: m, Score: math.Round(scores[seq]*1e4) / 1e4})
		}
	}
	if !stale {
		return out, nil
	}
	// Recall times feed staleness reports, not search; a busy database must
	// not turn a successful search into a failure. They are kept to the
	// minute, so repeating a search writes nothing and pays for no commit
	// or checkpoint.
	_, _ = s.db.ExecContext(ctx, `UPDATE memories SET recalled_at = ? WHERE recalled_at < ? AND seq IN (`+marks+`)`,
		append([]any{now.UnixMilli(), now.Add(-recallGranularity).UnixMilli()}, args...)...)
	return out, nil
}

// Scoped is a Toolkit over a Store alone, for memories outside any
// repository (user and session scope).
type Scoped struct {
	Store *Store
	Visibility
}

func (t Scoped) Search(ctx context.Context, q Query) ([]Result, error) {
	return t.Store.Search(ctx, t.Visibility, q)
}

func (t Scoped) Add(ctx context.Context, d Draft) (Added, error) {
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
