package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/acolyte-dev/acolyte/memory"
)

// How a team search reads the database (the indexes are in index.go and
// cells.go; the figures in CONTRIBUTING.md, "Team memory at scale").
//
// Round trip 1: the query words and their kin forms stemmed by the
// index's configuration, the team's size counted up to wholeTeam+1, and
// the crowd: the crowdSample memories first by their sample hash (an even
// sample), with their lexemes and vectors, and the team's centroids.
//
// A team of at most wholeTeam memories is then read whole (round trip 2)
// and ranked by memory.Score over every memory, as searchScan ranks
// it: the same scores, without testing every row's fts on the server.
//
// A larger one is described by the sample: its vectors give the mean and
// spread of cosines (z-scores, soft matches), the place of its last hash
// the team's size, and the share of it holding a word that word's count
// when the word's postings were cut short. Its candidates (round trip 2):
//   - lexical: each query word's and kin form's postings (team_terms), at
//     most nominateCap memories each, newest first; the lexicalNominees
//     best by summed IDF go on;
//   - vector: the sketchCandidates memories of the cellProbes cells
//     nearest the query whose sign bits lie nearest the query's
//     (team_sketches), re-scored by their true cosines here, the best
//     vectorNominees of each search text going on. Without cells yet the
//     crowd sample's nearest stand in.
//
// Round trip 3 reads the nominees whole (lexemes, vector, columns), and
// memory.Score ranks them against the crowd (memory.DocEvidence with a
// memory.Crowd).
const (
	wholeTeam        = 1024
	crowdSample      = 256
	nominateCap      = 500
	lexicalNominees  = 100
	sketchCandidates = 300
	vectorNominees   = 60
)

// vecOf is the vector of model $2 of the memory m.id, NULL when it has none.
const vecOf = `(SELECT e.vec FROM team_embeddings e WHERE e.team = $1 AND e.id = m.id AND e.model = $2)`

// mcolumns are columns qualified by the alias m of team_memories.
var mcolumns = "m." + strings.ReplaceAll(columns, ", ", ", m.")

// Search ranks the team's memories for q with memory.Score, reading the
// indexes as described above.
//
// A search filtered by kind or topic takes the same path over the
// memories of that kind and topic only: they are the crowd (size, word
// counts, vectors' spread), as the local store's view of a kind
// (memory/sqlite, catalog.view) and searchScan's WHERE make them, so the
// three rank a filtered search alike. Every read filters in its SQL (on
// team_memories.kind/topic; filterByID), not after it: over-fetching and
// filtering in Go would lose a rare kind's memories to the caps (500
// postings, 300 sketches, 60 HNSW rows), which a filter in the query
// applies after it instead.
func (s *Store) Search(ctx context.Context, vis memory.Visibility, q memory.Query) ([]memory.Result, error) {
	if err := checkVis(vis); err != nil {
		return nil, err
	}
	texts, err := q.Texts()
	if err != nil {
		return nil, err
	}
	if q.Scope != "" && q.Scope != memory.ScopeTeam {
		return []memory.Result{}, nil
	}
	if s.scanOnly {
		return s.searchScan(ctx, vis, q, texts)
	}
	rs, err := s.searchIndexed(ctx, vis, q, texts)
	if err != nil {
		return nil, fmt.Errorf("team search: %w", err)
	}
	return rs, nil
}

// form is what a query word or one of its kin forms matches: memories
// holding every lexeme (prefix: a lexeme beginning with each).
type form struct {
	lexemes []string
	prefix  bool
}

func (f form) matches(doc []string) bool {
	if len(f.lexemes) == 0 {
		return false
	}
	for _, l := range f.lexemes {
		i := sort.SearchStrings(doc, l)
		if i == len(doc) || (!f.prefix && doc[i] != l) || (f.prefix && !strings.HasPrefix(doc[i], l)) {
			return false
		}
	}
	return true
}

// ranges are the term ranges of team_terms that hold f's memories.
func (f form) ranges() (lo, hi []string) {
	for _, l := range f.lexemes {
		lo = append(lo, l)
		if f.prefix {
			hi = append(hi, l+"\U0010FFFF") // bytewise (COLLATE "C") above every word that begins with l
		} else {
			hi = append(hi, l+"\x01") // nothing lies between l and l+"\x01" but l
		}
	}
	return lo, hi
}

// word is one distinct query word: its own form and its kin's.
type word struct {
	text  string
	self  form
	kin   []form
	plain bool // kin apply: not an identifier whole in every text
}

func (w *word) holds(doc []string) bool { return w.self.matches(doc) }

func (w *word) kinHolds(doc []string) bool {
	if !w.plain || w.holds(doc) {
		return false
	}
	return slices.ContainsFunc(w.kin, func(f form) bool { return f.matches(doc) })
}

// doc is one memory a search ranks.
type doc struct {
	id      string
	lexemes []string // sorted
	vec     []float32
	m       *memory.Memory // read whole, when it was
}

// searchIndexed ranks the team's memories for the texts of q through the
// indexes, in the round trips described above.
func (s *Store) searchIndexed(ctx context.Context, vis memory.Visibility, q memory.Query, texts []string) ([]memory.Result, error) {
	model := ""
	if s.embedder != nil {
		model = s.embedder.Model()
	}
	terms, words := queryWords(texts)
	team, err := s.readOverview(ctx, vis, q.Filter, model, words)
	if err != nil {
		return nil, err
	}
	textVecs, wordVec := s.embedQuery(ctx, q, texts, words, team.haveVectors)

	var (
		docs  []doc
		c     memory.Crowd
		known map[string]memory.Memory
	)
	if team.size <= s.whole {
		if docs, c, err = s.readWholeTeam(ctx, vis, q.Filter, model); err != nil {
			return nil, err
		}
	} else {
		if docs, c, err = s.nominate(ctx, vis, q.Filter, model, words, team.sample, team.lastHash, team.cells, textVecs); err != nil {
			return nil, err
		}
		known = map[string]memory.Memory{}
		for _, d := range docs {
			if d.m != nil {
				known[d.id] = *d.m
			}
		}
	}

	ids := make([]string, len(docs))
	rdocs := make([]memory.RankDoc, len(docs))
	held := map[string][]int{}
	kin := map[string][]int{}
	for i, d := range docs {
		ids[i] = d.id
		rdocs[i].Vec = d.vec
		for _, w := range words {
			if w.holds(d.lexemes) {
				held[w.text] = append(held[w.text], i)
			} else if w.kinHolds(d.lexemes) {
				kin[w.text] = append(kin[w.text], i)
			}
		}
	}
	evidence := textEvidence(texts, terms, held, kin, wordVec, textVecs,
		func(rt []memory.RankTerm, qv []float32) memory.TextEvidence[string] {
			return memory.DocEvidence(ids, rdocs, rt, qv, &c)
		})
	return s.rank(ctx, vis, q, evidence, known)
}

// queryWords are the words of each text (terms), and each distinct word
// once, plain unless it is an identifier whole in every text it is in.
func queryWords(texts []string) (terms [][]string, words []*word) {
	terms = make([][]string, len(texts))
	byText := map[string]*word{}
	for i, t := range texts {
		terms[i] = memory.QueryWords(t)
		wholes := memory.IdentifierWholes(t)
		for _, w := range terms[i] {
			if byText[w] == nil {
				byText[w] = &word{text: w}
				words = append(words, byText[w])
			}
			byText[w].plain = byText[w].plain || !slices.Contains(wholes, w)
		}
	}
	return terms, words
}

// overview is what round trip 1 reads of the team: its size up to
// wholeTeam+1, whether it has vectors of the model, the crowd sample and
// the last sample hash, and the cells of the model's vectors.
type overview struct {
	size        int
	haveVectors bool
	sample      []doc
	lastHash    int32
	cells       *cells
}

// readOverview is round trip 1: the words and their kin forms stemmed as
// the index stems them, which it sets on words, and the team's overview.
func (s *Store) readOverview(ctx context.Context, vis memory.Visibility, f memory.Filter, model string, words []*word) (overview, error) {
	// Every text to stem: the words, then their kin forms.
	var stemIn []string
	var kinOf []*word
	var kinPrefix []bool
	for _, w := range words {
		stemIn = append(stemIn, w.text)
	}
	for _, w := range words {
		if !w.plain {
			continue
		}
		for _, k := range memory.KinForms(w.text) {
			stemIn = append(stemIn, k.Text)
			kinOf = append(kinOf, w)
			kinPrefix = append(kinPrefix, k.Prefix)
		}
	}

	var team overview
	var b pgx.Batch
	var stems [][]string
	b.Queue(`SELECT tsvector_to_array(to_tsvector($1::regconfig, w)) FROM unnest($2::text[]) WITH ORDINALITY u(w, i) ORDER BY i`,
		s.tsConfig, stemIn).Query(func(rows pgx.Rows) error {
		var err error
		stems, err = pgx.CollectRows(rows, pgx.RowTo[[]string])
		return err
	})
	b.Queue(`SELECT count(*) FROM (SELECT 1 FROM team_memories m WHERE m.team = $1`+filterSQL(f, "m", 3)+` LIMIT $2) x`,
		append([]any{vis.Team, s.whole + 1}, filterArgs(f)...)...).QueryRow(func(row pgx.Row) error {
		return row.Scan(&team.size)
	})
	b.Queue(`SELECT EXISTS (SELECT 1 FROM team_embeddings WHERE team = $1 AND model = $2)`, vis.Team, model).QueryRow(func(row pgx.Row) error {
		return row.Scan(&team.haveVectors)
	})
	// The vector by a subquery per row, not a join: joined, the planner
	// hashed every vector of the team to keep 256 (58 ms at 10k).
	b.Queue(`SELECT m.id, m.sample, tsvector_to_array(m.fts), `+vecOf+` FROM team_memories m
		WHERE m.team = $1`+filterSQL(f, "m", 4)+` ORDER BY m.sample LIMIT $3`,
		append([]any{vis.Team, model, crowdSample}, filterArgs(f)...)...).Query(func(rows pgx.Rows) error {
		var err error
		team.sample, err = readDocs(rows, &team.lastHash)
		return err
	})
	b.Queue(`SELECT dim, centroids FROM team_centroids WHERE team = $1 AND model = $2`, vis.Team, model).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var (
				dim int
				raw []byte
			)
			if err := rows.Scan(&dim, &raw); err != nil {
				return err
			}
			var err error
			if team.cells, err = decodeCells(dim, raw); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return overview{}, err
	}
	if len(stems) != len(stemIn) {
		return overview{}, fmt.Errorf("stemmed %d of %d words", len(stems), len(stemIn))
	}
	for i, w := range words {
		w.self = form{lexemes: stems[i]}
	}
	for j, w := range kinOf {
		if st := stems[len(words)+j]; len(st) > 0 {
			w.kin = append(w.kin, form{lexemes: st, prefix: kinPrefix[j]})
		}
	}
	return team, nil
}

// embedQuery is the normalized vectors of the texts, and the vector of
// each of the words by its text, or none (nil, and a wordVec answering
// nil): without a vector for the query the search is still useful,
// lexical only, as it is by choice with MethodLexical.
func (s *Store) embedQuery(ctx context.Context, q memory.Query, texts []string, words []*word, haveVectors bool) (textVecs [][]float32, wordVec func(string) []float32) {
	none := func(string) []float32 { return nil }
	if s.embedder == nil || q.Method == memory.MethodLexical || (!haveVectors && s.embedder.Dim() != 0) {
		return nil, none
	}
	in := slices.Clone(texts)
	for _, w := range words {
		in = append(in, w.text)
	}
	vecs, err := s.embedder.Embed(ctx, memory.PurposeQuery, in)
	if err != nil || len(vecs) != len(in) {
		return nil, none
	}
	for _, v := range vecs {
		memory.Normalize32(v)
	}
	byText := make(map[string][]float32, len(words))
	for i, w := range words {
		byText[w.text] = vecs[len(texts)+i]
	}
	return vecs[:len(texts)], func(w string) []float32 { return byText[w] }
}

// readWholeTeam is round trip 2 of a team of at most wholeTeam memories:
// every memory, in id order as searchScan ranks them, and the crowd they
// make.
func (s *Store) readWholeTeam(ctx context.Context, vis memory.Visibility, f memory.Filter, model string) ([]doc, memory.Crowd, error) {
	var c memory.Crowd
	rows, err := s.pool.Query(ctx, `SELECT m.id, m.sample, tsvector_to_array(m.fts), e.vec FROM team_memories m
		LEFT JOIN team_embeddings e ON e.team = m.team AND e.id = m.id AND e.model = $2
		WHERE m.team = $1`+filterSQL(f, "m", 3)+` ORDER BY m.id`, append([]any{vis.Team, model}, filterArgs(f)...)...)
	if err != nil {
		return nil, c, err
	}
	var ignored int32
	docs, err := readDocs(rows, &ignored)
	if err != nil {
		return nil, c, err
	}
	c.N = len(docs)
	for _, d := range docs {
		if d.vec != nil {
			c.Sample = append(c.Sample, d.vec)
		}
	}
	return docs, c, nil
}

// textEvidence gathers with gather the evidence of each of a query's texts
// (terms[i] are the words of texts[i]; held and kin, by word, the positions
// of the docs that hold it or a kin of it), for memory.Score. Both search
// paths share it.
func textEvidence(texts []string, terms [][]string, held, kin map[string][]int, wordVec func(string) []float32,
	textVecs [][]float32, gather func(rt []memory.RankTerm, qv []float32) memory.TextEvidence[string]) []memory.TextEvidence[string] {
	out := make([]memory.TextEvidence[string], len(texts))
	for i := range texts {
		wholes := memory.IdentifierWholes(texts[i])
		rt := make([]memory.RankTerm, len(terms[i]))
		for j, w := range terms[i] {
			rt[j] = memory.RankTerm{Word: w, Held: held[w], Kin: kin[w], Whole: slices.Contains(wholes, w), Vec: wordVec(w)}
		}
		var qv []float32
		if textVecs != nil {
			qv = textVecs[i]
		}
		out[i] = gather(rt, qv)
	}
	return out
}

// nominate reads a larger team's candidates, lexical and vector (round
// trip 2, and 2b for kin forms), scores the lexical ones against the
// crowd the sample describes, and reads the nominees whole (round trip 3).
func (s *Store) nominate(ctx context.Context, vis memory.Visibility, f memory.Filter, model string, words []*word, sample []doc, lastHash int32, cs *cells, textVecs [][]float32) ([]doc, memory.Crowd, error) {
	crowd := newSampledCrowd(sample, lastHash)
	probes, postings, near, err := s.readCandidates(ctx, vis, f, model, words, sample, cs, textVecs)
	if err != nil {
		return nil, crowd.Crowd, err
	}
	kinProbes, kinPostings, err := s.readKinPostings(ctx, vis, f, words, probes, postings)
	if err != nil {
		return nil, crowd.Crowd, err
	}
	self, kinOf := holdersOf(append(probes, kinProbes...), append(postings, kinPostings...))
	want := nominees(crowd.lexicalScores(words, self, kinOf), near, textVecs)
	docs, err := s.readNominees(ctx, vis, model, want)
	return docs, crowd.Crowd, err
}

// sampledCrowd is the crowd a larger team's sample describes, with the
// sample, from which the count of a word whose postings were cut short is
// estimated.
type sampledCrowd struct {
	memory.Crowd
	sample []doc
}

// newSampledCrowd describes the team by its sample: the len(sample)
// smallest of the team's hashes, evenly spread over the int32s, so that
// the last one's place estimates the team's size.
func newSampledCrowd(sample []doc, lastHash int32) sampledCrowd {
	k := float64(len(sample))
	u := (float64(lastHash) + math.MaxInt32 + 1.5) / (1 << 32)
	c := sampledCrowd{Crowd: memory.Crowd{N: int(max(k, math.Round(k/u-1))), Held: map[string]int{}, Kin: map[string]int{}}, sample: sample}
	for _, d := range sample {
		if d.vec != nil {
			c.Sample = append(c.Sample, d.vec)
		}
	}
	return c
}

// share estimates how many of the team's memories pred holds: its share
// of the sample.
func (c sampledCrowd) share(pred func(lexemes []string) bool) int {
	n := 0
	for _, d := range c.sample {
		if pred(d.lexemes) {
			n++
		}
	}
	return int(math.Round(float64(c.N) * float64(n) / float64(len(c.sample))))
}

// probe is one range of postings read: of a word's own lexemes, or of its
// kin forms'.
type probe struct {
	w   *word
	kin bool
}

// postingsSQL reads, for each range of terms ($2, $3), the ids of at most
// $4 of the team's memories holding one, newest first; filtered by f from
// $5 on, by the kind and topic each posting carries, so that the cap
// applies to the filtered postings.
func postingsSQL(f memory.Filter) string {
	return `SELECT ARRAY(SELECT x.id FROM team_terms x WHERE x.team = $1 AND x.term >= p.lo AND x.term < p.hi` + filterSQL(f, "x", 5) + `
		ORDER BY x.term DESC, x.id DESC LIMIT $4) FROM unnest($2::text[], $3::text[]) WITH ORDINALITY p(lo, hi, i) ORDER BY p.i`
}

// readCandidates is round trip 2: the postings of each word's lexemes, by
// probe, and the nearest vectors to each text's, in one batch.
func (s *Store) readCandidates(ctx context.Context, vis memory.Visibility, f memory.Filter, model string, words []*word, sample []doc, cs *cells, textVecs [][]float32) (probes []probe, postings [][]string, near [][]doc, err error) {
	var lo, hi []string
	for _, w := range words {
		l, h := w.self.ranges()
		lo, hi = append(lo, l...), append(hi, h...)
		for range l {
			probes = append(probes, probe{w, false})
		}
	}
	fargs := filterArgs(f)
	var b pgx.Batch
	if len(lo) > 0 {
		b.Queue(postingsSQL(f), append([]any{vis.Team, lo, hi, nominateCap}, fargs...)...).Query(func(rows pgx.Rows) error {
			var err error
			postings, err = pgx.CollectRows(rows, pgx.RowTo[[]string])
			return err
		})
	}
	near = make([][]doc, len(textVecs))
	for i, v := range textVecs {
		if s.hnsw[hnswIndex(model, len(v))] {
			// pgvector's index of the model; row-level security and the
			// team filter apply after it, so it scans on until it has
			// enough rows of this team (iterative scan, pgvector 0.8).
			b.Queue(`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false), set_config('hnsw.ef_search', '100', false)`)
			b.Queue(hnswSQL(model, len(v), filterByID(f, "team_embeddings.id", 4)), append([]any{vis.Team, vectorText(v), vectorNominees}, fargs...)...).Query(func(rows pgx.Rows) error {
				return readNear(rows, v, &near[i])
			})
			continue
		}
		if cs == nil || len(v) != len(cs.mean) {
			// No cells (yet): the sample's nearest stand in.
			for _, d := range sample {
				if len(d.vec) == len(v) {
					near[i] = append(near[i], d)
				}
			}
			continue
		}
		// Filtered, the cells' rows are sorted first (OFFSET 0 keeps the
		// filter out of the sort), then read in order until $5 pass it:
		// a lookup per row read, not per row of the cells.
		cands := `SELECT k.id FROM team_sketches k WHERE k.team = $1 AND k.model = $2 AND k.cell = ANY($3)
			ORDER BY bit_count(k.sketch # $4::varbit)`
		if fl := filterByID(f, "k.id", 6); fl != "" {
			cands = `SELECT k.id FROM (` + cands + ` OFFSET 0) k WHERE true` + fl
		}
		b.Queue(`SELECT m.id, `+vecOf+` FROM (`+cands+` LIMIT $5) m`,
			append([]any{vis.Team, model, cs.nearest(v, cellProbes), cs.sketch(v), sketchCandidates}, fargs...)...).Query(func(rows pgx.Rows) error {
			return readNear(rows, v, &near[i])
		})
	}
	if b.Len() > 0 {
		if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
			return nil, nil, nil, err
		}
	}
	if len(postings) != len(probes) {
		return nil, nil, nil, fmt.Errorf("read the postings of %d of %d words", len(postings), len(probes))
	}
	return probes, postings, near, nil
}

// readKinPostings is round trip 2b: the postings of the kin forms of the
// words that at most memory.KinMaxHeld memories hold, as far as the
// words' own postings (probes, postings) tell; memory.DocEvidence ignores
// the kin of the others, as Store.Search does not look them up.
func (s *Store) readKinPostings(ctx context.Context, vis memory.Visibility, f memory.Filter, words []*word, probes []probe, postings [][]string) ([]probe, [][]string, error) {
	held := map[*word]int{}
	for j, p := range probes {
		held[p.w] = max(held[p.w], len(postings[j]))
	}
	var lo, hi []string
	var kinProbes []probe
	for _, w := range words {
		if held[w] > memory.KinMaxHeld {
			continue
		}
		for _, k := range w.kin {
			l, h := k.ranges()
			lo, hi = append(lo, l...), append(hi, h...)
			for range l {
				kinProbes = append(kinProbes, probe{w, true})
			}
		}
	}
	if len(lo) == 0 {
		return nil, nil, nil
	}
	rows, err := s.pool.Query(ctx, postingsSQL(f), append([]any{vis.Team, lo, hi, nominateCap}, filterArgs(f)...)...)
	if err != nil {
		return nil, nil, err
	}
	kinPostings, err := pgx.CollectRows(rows, pgx.RowTo[[]string])
	if err != nil {
		return nil, nil, err
	}
	if len(kinPostings) != len(kinProbes) {
		return nil, nil, fmt.Errorf("read the postings of %d of %d kin forms", len(kinPostings), len(kinProbes))
	}
	return kinProbes, kinPostings, nil
}

// holders are the memories holding a word, or its kin forms: exact unless
// a probe was cut short at nominateCap.
type holders struct {
	ids   map[string]bool
	short bool
}

// holdersOf folds each probe's postings into the holders of its word
// (self) or of its word's kin (kinOf). A word's holders hold every one of
// its lexemes; its kin's hold any of theirs.
func holdersOf(probes []probe, postings [][]string) (self, kinOf map[*word]*holders) {
	self, kinOf = map[*word]*holders{}, map[*word]*holders{}
	for j, p := range probes {
		into := self
		if p.kin {
			into = kinOf
		}
		h := into[p.w]
		if h == nil {
			h = &holders{}
			into[p.w] = h
		}
		h.short = h.short || len(postings[j]) == nominateCap
		if h.ids == nil || p.kin {
			if h.ids == nil {
				h.ids = map[string]bool{}
			}
			for _, id := range postings[j] {
				h.ids[id] = true
			}
			continue
		}
		keep := map[string]bool{} // another lexeme of the same word
		for _, id := range postings[j] {
			if h.ids[id] {
				keep[id] = true
			}
		}
		h.ids = keep
	}
	return self, kinOf
}

// lexicalScores sums, for each memory holding a query word or its kin,
// the words' IDF over the crowd, and records in the crowd how many hold
// each word (Held) and its kin alone (Kin), estimated from the sample
// where the postings were cut short.
func (c sampledCrowd) lexicalScores(words []*word, self, kinOf map[*word]*holders) map[string]float64 {
	score := map[string]float64{}
	for _, w := range words {
		h := self[w]
		if h == nil { // a stop word: no memory holds it
			h = &holders{}
		}
		df := len(h.ids)
		if h.short {
			df = max(df, c.share(w.holds))
		}
		c.Held[w.text] = df
		for id := range h.ids {
			score[id] += memory.TermIDF(c.N, df)
		}
		g := kinOf[w]
		if g == nil {
			continue
		}
		for id := range g.ids {
			if h.ids[id] {
				delete(g.ids, id)
			}
		}
		kdf := len(g.ids)
		if g.short || h.short {
			kdf = max(kdf, c.share(w.kinHolds))
		}
		c.Kin[w.text] = kdf
		for id := range g.ids {
			score[id] += memory.KinWeight * memory.TermIDF(c.N, df+kdf)
		}
	}
	return score
}

// nominees are the lexicalNominees best by score (the newest first among
// equals), then the vectorNominees nearest each text's vector (textVecs)
// among its near candidates, by their true cosines, each id once.
func nominees(score map[string]float64, near [][]doc, textVecs [][]float32) []string {
	lexical := make([]string, 0, len(score))
	for id := range score {
		lexical = append(lexical, id)
	}
	sort.Slice(lexical, func(a, b int) bool {
		if score[lexical[a]] != score[lexical[b]] {
			return score[lexical[a]] > score[lexical[b]]
		}
		return lexical[a] > lexical[b] // newest first
	})
	want := lexical[:min(len(lexical), lexicalNominees)]
	for i, v := range textVecs {
		ds := near[i]
		cos := func(d doc) float32 {
			var s float32
			for j := range v {
				s += v[j] * d.vec[j]
			}
			return s
		}
		slices.SortFunc(ds, func(a, b doc) int {
			if x, y := cos(a), cos(b); x != y {
				if x > y {
					return -1
				}
				return 1
			}
			return strings.Compare(a.id, b.id)
		})
		for _, d := range ds[:min(len(ds), vectorNominees)] {
			if !slices.Contains(want, d.id) {
				want = append(want, d.id)
			}
		}
	}
	return want
}

// readNominees is round trip 3: the nominees whole, with their lexemes
// and their vector of model.
func (s *Store) readNominees(ctx context.Context, vis memory.Visibility, model string, want []string) ([]doc, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+mcolumns+`, tsvector_to_array(m.fts), `+vecOf+` FROM team_memories m
		WHERE m.team = $1 AND m.id = ANY($3) ORDER BY m.id`, vis.Team, model, want)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var docs []doc
	for rows.Next() {
		var (
			d   doc
			raw []byte
		)
		m, err := scan(rows, &d.lexemes, &raw)
		if err != nil {
			return nil, err
		}
		d.id, d.m, d.vec = m.ID, &m, decodeVector(raw)
		sort.Strings(d.lexemes)
		docs = append(docs, d)
	}
	return docs, rows.Err()
}

// filterSQL is f's kind and topic as conditions on the team_memories row
// alias a, their values numbered from $n (filterArgs are the values), or
// "" for an unfiltered search.
func filterSQL(f memory.Filter, a string, n int) string {
	var out string
	if f.Kind != "" {
		out += fmt.Sprintf(" AND %s.kind = $%d", a, n)
		n++
	}
	if f.Topic != "" {
		out += " AND " + topicCondition(a+".topic", n)
	}
	return out
}

// topicCondition is Filter.Topic in SQL on the column col, its values
// (topicArgs) numbered from $n. starts_with, not LIKE, so a topic's % and _
// stay literal.
func topicCondition(col string, n int) string {
	return fmt.Sprintf("(%s = $%d OR starts_with(%s, $%d))", col, n, col, n+1)
}

func topicArgs(filter string) []any { return []any{filter, memory.TopicPrefix(filter)} }

// filterByID is that filter on the memory of the id expression id, a
// subquery per row read from another table. Per row, not a join: joined,
// the planner may hash the kind's every memory, under row-level security,
// to keep a few hundred postings or sketches. A memory of another kind
// or topic gives false, a missing one NULL: neither passes.
func filterByID(f memory.Filter, id string, n int) string {
	c := filterSQL(f, "f", n)
	if c == "" {
		return ""
	}
	return " AND (SELECT " + strings.TrimPrefix(c, " AND ") + " FROM team_memories f WHERE f.team = $1 AND f.id = " + id + ")"
}

func filterArgs(f memory.Filter) []any {
	var out []any
	if f.Kind != "" {
		out = append(out, string(f.Kind))
	}
	if f.Topic != "" {
		out = append(out, topicArgs(f.Topic)...)
	}
	return out
}

// readDocs reads rows of id, sample hash, lexemes and vector, and the last
// row's hash into last.
func readDocs(rows pgx.Rows, last *int32) ([]doc, error) {
	defer rows.Close()
	var out []doc
	for rows.Next() {
		var (
			d   doc
			raw []byte
		)
		if err := rows.Scan(&d.id, last, &d.lexemes, &raw); err != nil {
			return nil, err
		}
		sort.Strings(d.lexemes)
		d.vec = decodeVector(raw)
		out = append(out, d)
	}
	return out, rows.Err()
}

// readNear reads rows of id and vector, keeping those of v's size.
func readNear(rows pgx.Rows, v []float32, near *[]doc) error {
	for rows.Next() {
		var (
			d   doc
			raw []byte
		)
		if err := rows.Scan(&d.id, &raw); err != nil {
			return err
		}
		if d.vec = decodeVector(raw); len(d.vec) == len(v) {
			*near = append(*near, d)
		}
	}
	return rows.Err()
}
