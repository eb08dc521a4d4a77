package memory

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
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

// Fusion. A candidate scores
//
//	(1-vectorWeight)·bm25/bestBM25 + vectorWeight·clamp(z/vectorFullZ, 0, 1)
//
// where z is how many standard deviations its cosine lies above the mean
// cosine of every visible memory. Scores lie in [0, 1]; 1 means the best
// lexical match is also an outstanding vector match. Measuring the vector
// side against all visible memories rather than min-max over its own top
// candidates lets it judge its own confidence: a query whose words the
// embedder barely knows lifts nothing out of the crowd, and memories no
// nearer than average (z <= 0) gain nothing.
//
// Measured on the LoCoMo dev split with the static embedder:
//
//	go build -o /tmp/acolyte . && /tmp/acolyte bench retrieval \
//	  --corpus locomo-dev/corpus.jsonl --queries locomo-dev/queries.jsonl
//
// recall@5: BM25 alone 0.561, vectors alone 0.338, min-max blend 0.6/0.4
// (the previous fusion) 0.556, this fusion 0.574. Weights 0.2-0.3 and full
// z 3-5 all land within 0.003 of each other, so round values were kept.
const (
	vectorWeight = 0.2
	vectorFullZ  = 4
)

// Search finds the memories visible from vis that best match q, fusing BM25
// over the lexical index with cosine similarity over the stored vectors.
func (s *Store) Search(ctx context.Context, vis Visibility, q Query) ([]Result, error) {
	texts := make([]string, 0, 1+len(q.Queries))
	for _, t := range append([]string{q.Text}, q.Queries...) {
		if strings.TrimSpace(t) != "" {
			texts = append(texts, t)
		}
	}
	if len(texts) == 0 {
		return nil, errors.New("search: the query is empty; say what to look for")
	}
	for _, t := range texts {
		if err := ValidateContent(t); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
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
	cat, err := s.catalog(ctx)
	if err != nil {
		return nil, err
	}
	v := cat.view(vis, q.Filter, topicSeqs)
	vectors := v.vectors()
	var queryVecs [][]float32
	if s.embedder != nil && (len(vectors) > 0 || s.embedder.Dim() == 0) {
		// Without a vector for the query the search is still useful: lexical
		// only. An embedder that learns its dimension from its first answer
		// is asked anyway, so that its vectors can be found next time.
		queryVecs, _ = s.embedder.Embed(ctx, PurposeQuery, texts)
	}

	best := map[int64]float64{}
	for i, text := range texts {
		lex, err := s.lexical(ctx, text, v)
		if err != nil {
			return nil, err
		}
		var vec []scored
		if i < len(queryVecs) {
			vec = cosines(queryVecs[i], vectors)
		}
		for seq, score := range fuse(lex, vec) {
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

// scored is one candidate's raw score on one side.
type scored struct {
	seq   int64
	score float64
}

// lexical returns the lexical scores of the best candidates, best first.
// FTS5 finds which memories hold each word (after Porter stemming); the
// scoring happens here, over the catalog, because SQLite's bm25() costs
// microseconds per match.
//
// A memory scores the summed IDF of the query words it holds: BM25 with
// the term frequency taken as one and no length normalisation (b = 0).
// Memories are single facts, so a word rarely repeats within one, and
// measured on the LoCoMo dev split recall@5 rose steadily as b fell (0.4:
// 0.576, 0.2: 0.577, 0: 0.585, fused), because a longer fact is not a
// weaker match. Word weights come from the memories this search can see,
// so a word common in one project is not rare because other projects
// lack it.
func (s *Store) lexical(ctx context.Context, text string, v *view) ([]scored, error) {
	if v.count == 0 {
		return nil, nil
	}
	seen := map[string]bool{}
	acc := make([]float64, len(v.c.seqs))
	var matched []int
	n := float64(v.count)
	for _, w := range queryWords(text) {
		if seen[w] {
			continue
		}
		seen[w] = true
		hits, err := s.postings(ctx, w, v)
		if err != nil {
			return nil, err
		}
		if len(hits) == 0 {
			continue
		}
		df := float64(len(hits))
		idf := math.Log((n - df + 0.5) / (df + 0.5))
		if idf <= 0 {
			// As in FTS5: a word in most memories still counts for a little,
			// so any match outranks none.
			idf = 1e-6
		}
		for _, i := range hits {
			if acc[i] == 0 {
				matched = append(matched, i)
			}
			acc[i] += idf
		}
	}
	out := make([]scored, len(matched))
	for j, i := range matched {
		out[j] = scored{v.c.seqs[i], acc[i]}
	}
	return best(out, candidatePool), nil
}

// best returns the n highest scores, best first, ties by seq. Only the
// winners are sorted: a common word can match thousands of memories.
func best(xs []scored, n int) []scored {
	better := func(a, b scored) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.seq < b.seq
	}
	if len(xs) > 4*n {
		// Keep a sorted window of the best n seen so far.
		top := make([]scored, 0, n+1)
		for _, x := range xs {
			if len(top) == n && !better(x, top[n-1]) {
				continue
			}
			i := sort.Search(len(top), func(i int) bool { return better(x, top[i]) })
			top = append(top, scored{})
			copy(top[i+1:], top[i:])
			top[i] = x
			if len(top) > n {
				top = top[:n]
			}
		}
		return top
	}
	sort.Slice(xs, func(i, j int) bool { return better(xs[i], xs[j]) })
	return xs[:min(len(xs), n)]
}

// postings returns the catalog positions of the visible memories whose
// lexical index holds word (after FTS5's stemming).
func (s *Store) postings(ctx context.Context, word string, v *view) ([]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?`,
		`"`+strings.ReplaceAll(word, `"`, `""`)+`"`)
	if err != nil {
		return nil, s.explain(fmt.Errorf("lexical search: %w", err))
	}
	defer rows.Close()
	var hits []int
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		// A memory written after the catalog was read is not in it; the
		// next search sees it.
		if i := v.c.index(seq); i >= 0 && v.visible[i] {
			hits = append(hits, i)
		}
	}
	return hits, rows.Err()
}

type storedVector struct {
	seq   int64
	scale float32
	q     []int8
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

// cosines scores every vector against the query, in no particular order.
func cosines(query []float32, vectors []storedVector) []scored {
	all := make([]scored, 0, len(vectors))
	for _, v := range vectors {
		if len(v.q) != len(query) {
			continue
		}
		all = append(all, scored{v.seq, float64(dot8(query, v.q) * v.scale)})
	}
	return all
}

// dot8 is the inner loop of every search: four independent sums let the
// CPU overlap the multiplies, and slicing both operands to one length lets
// the compiler drop the bounds checks.
func dot8(query []float32, q []int8) float32 {
	q = q[:len(query)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(query); i += 4 {
		s0 += query[i] * float32(q[i])
		s1 += query[i+1] * float32(q[i+1])
		s2 += query[i+2] * float32(q[i+2])
		s3 += query[i+3] * float32(q[i+3])
	}
	for ; i < len(query); i++ {
		s0 += query[i] * float32(q[i])
	}
	return s0 + s1 + s2 + s3
}

// fuse blends the lexical candidates (best first) with the vector scores of
// every visible memory, as described at vectorWeight. Both
// sides propose their best candidatePool memories; a memory only one side
// proposed still gets the other side's view of it. Memories that score 0
// are left out.
func fuse(lex, vec []scored) map[int64]float64 {
	out := make(map[int64]float64, len(lex)+candidatePool)
	for _, c := range lex {
		// FTS5 floors the weight of a word in most memories at 1e-6 rather
		// than 0, so the best score is positive whenever there is a match.
		out[c.seq] = (1 - vectorWeight) * c.score / lex[0].score
	}
	mean, spread := meanDeviation(vec)
	if spread == 0 {
		// Every memory is equally near (or the query has no vector):
		// the vector side knows nothing.
		return out
	}
	var proposals []scored
	for _, c := range vec {
		z := (c.score - mean) / spread
		if z <= 0 {
			continue
		}
		if _, lexical := out[c.seq]; lexical {
			out[c.seq] += vectorWeight * min(1, z/vectorFullZ)
		} else {
			proposals = append(proposals, scored{c.seq, z})
		}
	}
	for _, c := range best(proposals, candidatePool) {
		out[c.seq] = vectorWeight * min(1, c.score/vectorFullZ)
	}
	return out
}

// meanDeviation returns the mean and standard deviation of the scores.
func meanDeviation(xs []scored) (mean, spread float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x.score
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		spread += (x.score - mean) * (x.score - mean)
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
	now := s.now().UTC().Truncate(time.Millisecond)
	out := make([]Result, 0, len(ranked))
	for _, seq := range ranked {
		if m, ok := bySeq[seq]; ok {
			m.RecalledAt = now
			out = append(out, Result{Memory: m, Score: math.Round(scores[seq]*1e4) / 1e4})
		}
	}
	// Recall times feed staleness reports, not search; a busy database must
	// not turn a successful search into a failure. They are kept to the
	// minute: an update that changes no row writes nothing, so repeating a
	// search does not pay for a commit and a checkpoint each time.
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

// CanSee reports whether m is visible from v.
func (v Visibility) CanSee(m Memory) bool {
	switch m.Scope {
	case ScopeUser:
		return true
	case ScopeProject:
		return m.ScopeKey != "" && m.ScopeKey == v.ProjectKey
	case ScopeSession:
		return m.ScopeKey != "" && m.ScopeKey == v.SessionKey
	}
	return false
}
