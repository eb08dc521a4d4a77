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

	where, args := visible(vis, q.Filter)
	var queryVecs [][]float32
	if s.embedder != nil && s.embedder.Dim() == 0 {
		// An embedder that learns its dimension from its first answer cannot
		// name its vector space until it has embedded something.
		queryVecs, _ = s.embedder.Embed(ctx, PurposeQuery, texts)
	}
	vectors, err := s.loadVectors(ctx, vis, q.Filter)
	if err != nil {
		return nil, err
	}
	if len(vectors) > 0 && queryVecs == nil {
		// Without a vector for the query the search is still useful: lexical only.
		queryVecs, _ = s.embedder.Embed(ctx, PurposeQuery, texts)
	}

	best := map[int64]float64{}
	for i, text := range texts {
		lex, err := s.lexical(ctx, text, where, args)
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

// lexical returns the raw BM25 scores of the best lexical candidates, best
// first.
func (s *Store) lexical(ctx context.Context, text, where string, args []any) ([]scored, error) {
	match := matchExpr(text)
	if match == "" {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT m.seq, -bm25(memories_fts) AS score
		FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
		WHERE memories_fts MATCH ? AND `+where+`
		ORDER BY score DESC, m.seq LIMIT ?`, append(append([]any{match}, args...), candidatePool)...)
	if err != nil {
		return nil, s.explain(fmt.Errorf("lexical search: %w", err))
	}
	defer rows.Close()
	var out []scored
	for rows.Next() {
		var c scored
		if err := rows.Scan(&c.seq, &c.score); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// matchExpr turns free text into an FTS5 query: every meaningful word,
// quoted so punctuation cannot be read as query syntax, any of which may match.
func matchExpr(text string) string {
	seen := map[string]bool{}
	var terms []string
	for _, w := range queryWords(text) {
		if seen[w] {
			continue
		}
		seen[w] = true
		terms = append(terms, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	return strings.Join(terms, " OR ")
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
		var dot float32
		for i, x := range v.q {
			dot += float32(x) * query[i]
		}
		all = append(all, scored{v.seq, float64(dot * v.scale)})
	}
	return all
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
	// Sorting only the memories nearer than average, not all of them, keeps
	// this cheap on a large store.
	sort.Slice(proposals, func(i, j int) bool {
		if proposals[i].score != proposals[j].score {
			return proposals[i].score > proposals[j].score
		}
		return proposals[i].seq < proposals[j].seq
	})
	for _, c := range proposals[:min(len(proposals), candidatePool)] {
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
	// not turn a successful search into a failure.
	_, _ = s.db.ExecContext(ctx, `UPDATE memories SET recalled_at = ? WHERE seq IN (`+marks+`)`, append([]any{now.UnixMilli()}, args...)...)
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
