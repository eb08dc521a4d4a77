package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// Search finds the memories visible from vis that best match q, fusing
// IDF-weighted word matches over the lexical index with cosine similarity
// over the stored vectors.
func (s *Store) Search(ctx context.Context, vis memory.Visibility, q memory.Query) ([]memory.Result, error) {
	texts, err := q.Texts()
	if err != nil {
		return nil, err
	}

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
	terms, words := queryTerms(texts)

	// The vector side (the catalog, the query's vectors, a cosine for every
	// visible memory) needs no SQL when the saved catalog is current, so it
	// runs beside the lexical lookups, which do: SQLite answers one
	// statement at a time on this connection. A remote embedder's round
	// trip overlaps them too.
	saved := make(chan *vectorSide, 1)
	go func() {
		v, e, _ := s.searchSpace(ctx, gen, false, vis, q.Filter, topicSeqs)
		if v == nil {
			saved <- nil
			return
		}
		saved <- s.vectorSide(ctx, v, e, texts, words)
	}()
	postings := make([][][]int64, len(texts))
	kin := make([][][]int64, len(texts))
	// common[i] are the words of text i that a Near search leaves out
	// for now, and nearTerms[i] the words it looked up.
	common := make([][]string, len(texts))
	nearTerms := make([][]string, len(texts))
	for i, text := range texts {
		if q.Near {
			if nearTerms[i], postings[i], common[i], err = s.nearPostings(ctx, terms[i]); err != nil {
				break
			}
			kin[i] = make([][]int64, len(nearTerms[i]))
			continue
		}
		if postings[i], kin[i], err = s.lookups(ctx, text, terms[i], q.Method, nil); err != nil {
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
		v, e, err := s.searchSpace(ctx, gen, true, vis, q.Filter, topicSeqs)
		if err != nil {
			return nil, err
		}
		defer s.releaseCatalog(v.c)
		side = s.vectorSide(ctx, v, e, texts, words)
	}
	for i := 0; q.Near && i < len(texts); i++ {
		if rareOutweigh(postings[i], len(common[i]), side.view.count) {
			terms[i] = nearTerms[i]
			continue
		}
		if postings[i], kin[i], err = s.lookupsAfterNear(ctx, texts[i], terms[i], nearTerms[i], postings[i], q.Method); err != nil {
			return nil, err
		}
	}

	evidence := make([]memory.TextEvidence[int64], len(texts))
	for i := range texts {
		lex := lexical(terms[i], postings[i], kin[i], side.view)
		// Words alone or vectors alone earn no soft matches: their crowd
		// is not worked out.
		if side.wordVecs != nil && q.Method == memory.MethodFused {
			for t := range lex.terms {
				lex.terms[t].vec = side.wordVecs[slices.Index(words, lex.terms[t].word)]
			}
		}
		evidence[i] = textEvidence(lex, side.passes[i], side.view, memory.IdentifierWholes(texts[i]))
	}
	var globs map[int64][]string
	if len(q.Paths) > 0 {
		if globs, err = s.visibleGlobs(ctx, vis, q.Filter); err != nil {
			return nil, err
		}
	}
	out, err := s.results(ctx, memory.Score(q, evidence, globs, &s.globs))
	for i := range out {
		out[i].Vectors = side.space
	}
	return out, err
}

// lookupsAfterNear looks up the words of a Near search's text whose left
// out words could outweigh the rest, so that the text is ranked as an
// ordinary search ranks it: with the rare words' postings (nearTerms',
// nearPostings), read whole already, not read again.
func (s *Store) lookupsAfterNear(ctx context.Context, text string, terms, nearTerms []string, nearPostings [][]int64, method memory.Method) (postings, kin [][]int64, err error) {
	read := make(map[string][]int64, len(nearTerms))
	for j, w := range nearTerms {
		read[w] = nearPostings[j]
	}
	return s.lookups(ctx, text, terms, method, read)
}

// queryTerms returns the distinct words of each text, and of all texts
// together: each word's own vector feeds the soft matches.
func queryTerms(texts []string) (terms [][]string, words []string) {
	terms = make([][]string, len(texts))
	for i, text := range texts {
		terms[i] = memory.QueryWords(text)
		for _, w := range terms[i] {
			if !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	return terms, words
}

// visibleGlobs are the globs of each memory visible from vis through f
// that carries any, by seq: the few a path-scoped search matches against
// its files (memory.Score's path stage), read through the partial index.
func (s *Store) visibleGlobs(ctx context.Context, vis memory.Visibility, f memory.Filter) (map[int64][]string, error) {
	where, args := visible(vis, f)
	// INDEXED BY: the planner would rather take the scope index and read
	// every visible row to test its globs (10 ms at 10k memories).
	rows, err := s.db.QueryContext(ctx, `SELECT m.seq, m.globs FROM memories m INDEXED BY memories_with_globs
		WHERE m.globs != '' AND `+where, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	out := map[int64][]string{}
	for rows.Next() {
		var seq int64
		var raw string
		if err := rows.Scan(&seq, &raw); err != nil {
			return nil, s.explain(err)
		}
		var globs []string
		if json.Unmarshal([]byte(raw), &globs) == nil && len(globs) > 0 {
			out[seq] = globs
		}
	}
	return out, s.explain(rows.Err())
}

// vectorSide is what the stored vectors say about one search.
type vectorSide struct {
	view *view
	// passes[i] is what text i's vector says; empty when the text has no
	// vector.
	passes []vectorPass
	// wordVecs holds each query word's vector, in the order of the words;
	// nil when the embedder gave none.
	wordVecs [][]float32
	// space is the model whose vectors ranked the memories, "" when none
	// did.
	space string
}

// searchSpace picks the vector space a search runs in and returns the
// view of its catalog, which the caller must release (view.c), and the
// embedder of its query vectors: the embedder's space when every memory
// the search can see has a vector there, else a layered embedder's
// instant space. Cosines of two spaces are not comparable, so one search
// uses one. Without rebuild it touches no SQL, and returns a nil view when
// a catalog it needs is not saved.
func (s *Store) searchSpace(ctx context.Context, gen string, rebuild bool, vis memory.Visibility, f memory.Filter, topicSeqs map[int64]bool) (*view, memory.Embedder, error) {
	spaces := s.spaces()
	for i, e := range spaces {
		c := s.savedCatalog(gen, modelOf(e))
		if c == nil && rebuild {
			var err error
			if c, err = s.rebuildCatalog(ctx, modelOf(e)); err != nil {
				return nil, nil, err
			}
		}
		if c == nil {
			return nil, nil, nil
		}
		v := c.view(vis, f, topicSeqs)
		if len(v.withVec) == v.count {
			return v, e, nil
		}
		if i == len(spaces)-1 {
			return v, e, nil
		}
		s.leftPending.Store(true)
		s.releaseCatalog(c)
	}
	panic("unreachable")
}

func (s *Store) vectorSide(ctx context.Context, v *view, e memory.Embedder, texts, words []string) *vectorSide {
	c := v.c
	side := &vectorSide{view: v, passes: make([]vectorPass, len(texts))}
	// Without a vector for the query the search is still useful: lexical
	// only. An embedder that learns its dimension from its first answer is
	// asked anyway, so that its vectors can be found next time.
	if e == nil || (len(v.withVec) == 0 && e.Dim() != 0) {
		return side
	}
	vecs, err := e.Embed(ctx, memory.PurposeQuery, append(slices.Clone(texts), words...))
	if err != nil || len(vecs) != len(texts)+len(words) {
		return side
	}
	if len(v.withVec) > 0 {
		// The catalog's model, which the stored vectors are of: an
		// embedder that learns its dimension may rename itself meanwhile.
		side.space = c.model
	}
	side.wordVecs = vecs[len(texts):]
	for i := range texts {
		side.passes[i] = passOver(cosines(vecs[i], c, v.withVec), v)
	}
	return side
}

// vectorPass is what one text's vector says of every visible memory,
// worked out before the lexical side is known, so that the pass over all
// of them runs beside the lexical lookups rather than after them (at 100k
// memories, most of the ranking's time).
type vectorPass struct {
	// cos holds the cosine with each memory of view.withVec, in that
	// order; nil when the text has no vector.
	cos []float32
	// mean and spread are the cosines' mean and standard deviation.
	mean, spread float64
	// above are the memories whose cosines lie furthest above the crowd,
	// by their z-score, best first, ties to the lower seq: twice the
	// candidate pool, so that memory.Score still has a whole pool once it
	// sets aside the lexical candidates, of which there are at most a pool.
	above []memory.Hit[int64]
}

func passOver(cos []float32, v *view) vectorPass {
	p := vectorPass{cos: cos}
	p.mean, p.spread = memory.MeanDeviation(cos)
	if p.spread == 0 {
		// A spread of 0 means every memory is equally near (or the query
		// has no vector): the vector side knows nothing.
		return p
	}
	above := memory.NewTopN[int64](2 * memory.CandidatePool)
	// cut is a cosine below which no memory can enter above: at first
	// those at or below the mean, then those below above's last. Most
	// memories fall below it, and are turned away by one comparison of
	// float32s; the rest take the exact test of z and Admits.
	cut := p.cosineAt(0)
	for j, c := range cos {
		if c < cut {
			continue
		}
		z := p.z(j)
		if z <= 0 {
			continue
		}
		if seq := v.c.seqs[v.withVec[j]]; above.Admits(seq, z) {
			above.Push(seq, z)
			if last, full := above.Last(); full {
				cut = p.cosineAt(last.Score)
			}
		}
	}
	p.above = above.Best()
	return p
}

// cosineAt is a float32 cosine at or below every cosine whose z-score is
// at least z: taken low by a millionth of the terms it sums, so that
// neither the float64 arithmetic nor the rounding to float32 can put it
// above one.
func (p vectorPass) cosineAt(z float64) float32 {
	at := p.mean + z*p.spread
	margin := 1e-6 * (math.Abs(p.mean) + math.Abs(z*p.spread))
	return float32(at - margin)
}

// z is the z-score of the cosine at position j of view.withVec.
func (p vectorPass) z(j int) float64 { return (float64(p.cos[j]) - p.mean) / p.spread }

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
	top []memory.Hit[int64]
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
// memory.KinWeight of the IDF of the word and its kin taken together: "lint"
// finds "linter", "authenticate" finds "Auth", at half the weight of the
// word itself, as with soft matches.
func lexical(words []string, postings, kin [][]int64, v *view) lexicalMatch {
	var m lexicalMatch
	if v.count == 0 {
		return m
	}
	m.exact = make([]float64, len(v.c.seqs))
	var matched []int
	for j, w := range words {
		held := make([]int, 0, len(postings[j]))
		find := seqFinder(v.c.seqs)
		for _, seq := range postings[j] {
			// A memory written after the catalog was read is not in it; the
			// next search sees it.
			if i := find(seq); i >= 0 && v.visible[i] {
				held = append(held, i)
			}
		}
		slices.Sort(held)
		held = slices.Compact(held)
		var near []int
		find = seqFinder(v.c.seqs)
		for _, seq := range kin[j] {
			if i := find(seq); i >= 0 && v.visible[i] {
				if _, holds := slices.BinarySearch(held, i); !holds {
					near = append(near, i)
				}
			}
		}
		slices.Sort(near)
		near = slices.Compact(near)
		idf := memory.TermIDF(v.count, len(held))
		for _, i := range held {
			if m.exact[i] == 0 {
				matched = append(matched, i)
			}
			m.exact[i] += idf
		}
		if len(near) > 0 {
			family := memory.KinWeight * memory.TermIDF(v.count, len(held)+len(near))
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
	top := memory.NewTopN[int64](memory.CandidatePool)
	for _, i := range matched {
		if seq := v.c.seqs[i]; top.Admits(seq, m.exact[i]) {
			top.Push(seq, m.exact[i])
		}
	}
	m.top = top.Best()
	return m
}

// seqFinder returns what catalog.index does, the position of a seq among
// the ascending seqs or -1, for seqs asked in ascending order as FTS5
// lists them: each lookup gallops on from where the last one ended, so a
// word that 5k of 100k memories hold costs a few steps a seq, not the
// 17 of a binary search over the whole catalog. A seq below the last one
// asked (the joined words' seqs, appended after a word's own) starts
// over from the first position.
func seqFinder(seqs []int64) func(seq int64) int {
	from := 0 // every seq before from is below the last seq asked
	var last int64
	return func(seq int64) int {
		if seq < last {
			from = 0
		}
		last = seq
		// Gallop: widen the step until seqs[from+step-1] >= seq, then
		// search the last step's span.
		lo, step := from, 1
		for lo+step <= len(seqs) && seqs[lo+step-1] < seq {
			lo += step
			step *= 2
		}
		hi := min(lo+step, len(seqs))
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if seqs[mid] < seq {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		at := lo
		from = at
		if at < len(seqs) && seqs[at] == seq {
			return at
		}
		return -1
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

// lookups returns, for each of terms (the words of text), the seqs of
// the memories that hold it, and of those that hold only a kin of it.
// read holds postings already read whole, which are not looked up again.
func (s *Store) lookups(ctx context.Context, text string, terms []string, method memory.Method, read map[string][]int64) (postings, kin [][]int64, err error) {
	postings = make([][]int64, len(terms))
	kin = make([][]int64, len(terms))
	// Kin rescue the words that few memories hold (see memory.KinMaxHeld). An
	// identifier's whole has none of its own: its parts have them.
	wholes := memory.IdentifierWholes(text)
	for j, w := range terms {
		if p, ok := read[w]; ok {
			postings[j] = p
		} else if postings[j], err = s.postings(ctx, w); err != nil {
			return nil, nil, err
		}
		if method == memory.MethodVector || len(postings[j]) > memory.KinMaxHeld || slices.Contains(wholes, w) {
			continue
		}
		if kin[j], err = s.kinPostings(ctx, w); err != nil {
			return nil, nil, err
		}
	}
	// A memory that writes two adjacent words of the text as one
	// ("codepaths" for "code paths") holds both: the joined word's
	// memories count as holding each part exactly.
	looked := 0
	for _, p := range memory.WordPairs(text) {
		a, b := slices.Index(terms, p[0]), slices.Index(terms, p[1])
		if a < 0 || b < 0 {
			continue
		}
		if looked++; looked > memory.MaxQueryTerms {
			break // the same bound as the words themselves
		}
		joined, err := s.postings(ctx, p[0]+p[1])
		if err != nil {
			return nil, nil, err
		}
		postings[a] = append(postings[a], joined...)
		postings[b] = append(postings[b], joined...)
	}
	return postings, kin, nil
}

// nearMaxHeld is the most memories a word may be held by, visible or
// not, for a Near search to look it up. Reading a word's postings costs
// about half a microsecond per memory that holds it: at 100k memories a
// new fact of nine words, four of them in 5% of the memories each, paid
// 5 ms for their postings, for words whose IDF is a third of a rare
// word's. Below 1,000 memories no word is ever left out.
const nearMaxHeld = 1000

// nearPostings looks up the words of a Near search, each as far as
// nearMaxHeld+1 memories. It returns those that at most nearMaxHeld
// memories hold, with the seqs of those memories, and apart the common
// ones, which the search leaves out when rareOutweigh says so. A Near
// search looks up no kin and no joined pairs: each costs a lookup as dear
// as a rare word's own, and a near-duplicate holds the words themselves.
func (s *Store) nearPostings(ctx context.Context, words []string) (rare []string, postings [][]int64, common []string, err error) {
	// FTS5 hands its rows over one at a time, so the limit also spares it
	// reading the rest of a common word's doclist. The statement is
	// prepared once for all the words: parsing its subquery cost about as
	// much as a rare word's lookup.
	stmt, err := s.db.PrepareContext(ctx, `SELECT group_concat(rowid) FROM
		(SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)`)
	if err != nil {
		return nil, nil, nil, s.explain(fmt.Errorf("lexical search: %w", err))
	}
	defer stmt.Close()
	for _, w := range words {
		var list sql.NullString
		if err := stmt.QueryRowContext(ctx, "body : "+ftsPhrase(w), nearMaxHeld+1).Scan(&list); err != nil {
			return nil, nil, nil, s.explain(fmt.Errorf("lexical search: %w", err))
		}
		seqs, err := parseRowids(list.String)
		if err != nil {
			return nil, nil, nil, err
		}
		if len(seqs) > nearMaxHeld {
			common = append(common, w)
			continue
		}
		rare = append(rare, w)
		postings = append(postings, seqs)
	}
	return rare, postings, common, nil
}

// rareOutweigh reports whether a Near search may leave out the common
// words of a text: when the rare words that some memory holds weigh at
// least as much as the common ones could (each at most the IDF of
// nearMaxHeld+1 of the n visible memories), a near-duplicate, which shares
// the rare words, outranks whatever merely shares the common ones. A
// text of common words only ("the billing service retries failed jobs"
// among 50k memories that each say a service, an action and a moment)
// needs them to tell its duplicate from the memories that share all but
// one of them, and is looked up whole.
func rareOutweigh(rarePostings [][]int64, common, n int) bool {
	if common == 0 {
		return true
	}
	n = max(n, nearMaxHeld+1)
	rare := 0.0
	for _, p := range rarePostings {
		if len(p) > 0 {
			rare += memory.TermIDF(n, len(p))
		}
	}
	return rare >= float64(common)*memory.TermIDF(n, nearMaxHeld+1)
}

// ftsPhrase quotes a word as an FTS5 phrase.
func ftsPhrase(w string) string { return `"` + strings.ReplaceAll(w, `"`, `""`) + `"` }

// match returns the seqs of the memories that match an FTS5 query, in the
// order FTS5 lists them (ascending).
func (s *Store) match(ctx context.Context, query string) ([]int64, error) {
	var list sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT group_concat(rowid) FROM memories_fts WHERE memories_fts MATCH ?`, query).Scan(&list)
	if err != nil {
		return nil, s.explain(fmt.Errorf("lexical search: %w", err))
	}
	return parseRowids(list.String)
}

// parseRowids reads the comma-separated rowids of group_concat. Rowids
// are seqs, short runs of digits, which it reads without strconv: at
// 100k memories a search parsed 20k of them, and strings.SplitSeq with
// strconv.ParseInt cost a tenth of its lexical lookups.
func parseRowids(list string) ([]int64, error) {
	if list == "" {
		return nil, nil
	}
	seqs := make([]int64, 0, strings.Count(list, ",")+1)
	start := 0
	for i := 0; i <= len(list); i++ {
		if i < len(list) && list[i] != ',' {
			continue
		}
		field := list[start:i]
		start = i + 1
		if field == "" {
			continue
		}
		var seq int64
		plain := len(field) <= 18 // no overflow
		for j := 0; plain && j < len(field); j++ {
			if c := field[j]; c >= '0' && c <= '9' {
				seq = seq*10 + int64(c-'0')
			} else {
				plain = false
			}
		}
		if !plain {
			var err error
			if seq, err = strconv.ParseInt(field, 10, 64); err != nil {
				return nil, fmt.Errorf("lexical search: rowid %q: %w", field, err)
			}
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
	if b := memory.DerivationalBase(word); b != "" {
		alts = append(alts, ftsPhrase(b))
	} else if memory.MayBeBase(word) {
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
	j := 0
	if haveDotAVX2 && len(query) > 0 && len(query)%8 == 0 && len(query) == c.dim {
		// Four vectors a call: one vector's sums are a chain of dependent
		// FMAs, and four chains side by side keep the CPU busy. The
		// cosines are dot8's to the bit (TestDot8x4MatchesDot8), so a
		// search ranks as before. The kernel reads len(query) bytes of
		// each vector unchecked, so a query of another length than the
		// catalog's takes dot8, whose slicing checks it.
		var sums [4]float32
		for ; j+4 <= len(at); j += 4 {
			k0, k1, k2, k3 := c.vecAt[at[j]], c.vecAt[at[j+1]], c.vecAt[at[j+2]], c.vecAt[at[j+3]]
			dot8x4AVX2(&query[0], &c.vector(k0)[0], &c.vector(k1)[0], &c.vector(k2)[0], &c.vector(k3)[0], len(query), &sums)
			out[j], out[j+1], out[j+2], out[j+3] = sums[0]*c.scales[k0], sums[1]*c.scales[k1], sums[2]*c.scales[k2], sums[3]*c.scales[k3]
		}
	}
	for ; j < len(at); j++ {
		k := c.vecAt[at[j]]
		out[j] = dot8(query, c.vector(k)) * c.scales[k]
	}
	return out
}

// textEvidence is what the store knows of one search text, for
// memory.Score: the lexical side's best matches, the vector side's best
// proposals, and how to look up any candidate's exact score, z-score and
// cosines with the words' own vectors. wholes are the text's identifier
// wholes.
func textEvidence(lex lexicalMatch, vec vectorPass, v *view, wholes []string) memory.TextEvidence[int64] {
	c := v.c
	e := memory.TextEvidence[int64]{Words: make([]memory.WordEvidence, len(lex.terms)), Lexical: lex.top, Vector: vec.above, Vectors: vec.spread > 0, Spread: vec.spread}
	for t, term := range lex.terms {
		e.Words[t] = memory.WordEvidence{IDF: term.idf, Whole: slices.Contains(wholes, term.word), Known: len(term.held) > 0}
	}
	if len(v.withVec) > 0 {
		// Every memory's cosine with every word would cost a pass over the
		// vectors per word; a fixed, evenly spread sample tells how near
		// the crowd lies closely enough.
		step := (len(v.withVec) + memory.SoftSample - 1) / memory.SoftSample
		sample := make([]int32, 0, memory.SoftSample)
		for j := 0; j < len(v.withVec); j += step {
			sample = append(sample, v.withVec[j])
		}
		for t, term := range lex.terms {
			if term.vec == nil {
				continue
			}
			// A word vector of the wrong size has no cosines, so no spread,
			// and is never compared.
			e.Words[t].Mean, e.Words[t].Spread = memory.MeanDeviation(cosines(term.vec, c, sample))
		}
	}
	e.Exact = func(seq int64) float64 { return lex.exact[c.index(seq)] }
	e.Z = func(seq int64) float64 {
		if j, ok := slices.BinarySearch(v.withVec, int32(c.index(seq))); ok {
			return vec.z(j)
		}
		return 0
	}
	// Score asks for a candidate's cosine with each word in turn: its
	// catalog position is looked up once.
	lastSeq, i := int64(-1), -1
	e.WordCosine = func(seq int64, w int) (float64, bool) {
		if seq != lastSeq {
			lastSeq, i = seq, c.index(seq)
		}
		at := c.vecAt[i]
		if at < 0 {
			return 0, false
		}
		term := &lex.terms[w]
		if _, holds := slices.BinarySearch(term.held, i); holds {
			return 0, false
		}
		return float64(dot8(term.vec, c.vector(at)) * c.scales[at]), true
	}
	return e
}

// results loads the ranked memories and marks them recalled.
func (s *Store) results(ctx context.Context, ranked []memory.Hit[int64]) ([]memory.Result, error) {
	if len(ranked) == 0 {
		return []memory.Result{}, nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(ranked)), ",")
	args := make([]any, len(ranked))
	for i, r := range ranked {
		args[i] = r.Key
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE m.seq IN (`+marks+`)`, args...)
	if err != nil {
		return nil, s.explain(err)
	}
	bySeq := map[int64]memory.Memory{}
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
	out := make([]memory.Result, 0, len(ranked))
	stale := false
	for _, r := range ranked {
		if m, ok := bySeq[r.Key]; ok {
			stale = stale || m.RecalledAt.Before(now.Add(-memory.RecallGranularity))
			m.RecalledAt = now
			out = append(out, memory.Result{Memory: m, Score: math.Round(r.Score*1e4) / 1e4})
		}
	}
	if !stale || s.Damaged() != "" || s.readOnly != "" {
		// A damaged or read-only file takes no write, bookkeeping included.
		return out, nil
	}
	// Recall times feed staleness reports, not search; a busy database must
	// not turn a successful search into a failure. They are kept to the
	// minute, so repeating a search writes nothing and pays for no commit
	// or checkpoint.
	// Nor may another process's write transaction hold the search up: the
	// update waits for the database only briefly.
	ctx, cancel := context.WithTimeout(ctx, recallWriteWait)
	defer cancel()
	_, _ = s.db.ExecContext(ctx, `UPDATE memories SET recalled_at = ? WHERE recalled_at < ? AND seq IN (`+marks+`)`,
		append([]any{now.UnixMilli(), now.Add(-memory.RecallGranularity).UnixMilli()}, args...)...)
	return out, nil
}

// kinQuery returns the FTS5 query that matches the kin of the query word
// w, or "" when it has none. FTS5 stems each term as it stems the index,
// so a prefix query on "authenticate" finds "authentication" as well.
func kinQuery(w string) string {
	var terms []string
	for _, f := range memory.KinForms(w) {
		t := `"` + strings.ReplaceAll(f.Text, `"`, `""`) + `"`
		if f.Prefix {
			t += "*"
		}
		terms = append(terms, t)
	}
	return strings.Join(terms, " OR ")
}
