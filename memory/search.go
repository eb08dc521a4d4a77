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

// Fusion weights, measured on the LoCoMo dev split with `acolyte bench
// retrieval` (see CONTRIBUTING.md). Both sides are scaled to [0, 1] within
// their own candidate pool before they are blended.
const (
	lexicalWeight = 0.6
	vectorWeight  = 0.4
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
	vectors, err := s.loadVectors(ctx, where, args)
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
		var vec map[int64]float64
		if i < len(queryVecs) {
			vec = nearest(queryVecs[i], vectors)
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

// lexical returns BM25 scores of the best lexical candidates, scaled so the
// best is 1.
func (s *Store) lexical(ctx context.Context, text, where string, args []any) (map[int64]float64, error) {
	match := matchExpr(text)
	if match == "" {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT m.seq, -bm25(memories_fts) AS score
		FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
		WHERE memories_fts MATCH ? AND `+where+`
		ORDER BY score DESC LIMIT ?`, append(append([]any{match}, args...), candidatePool)...)
	if err != nil {
		return nil, s.explain(fmt.Errorf("lexical search: %w", err))
	}
	defer rows.Close()
	out := map[int64]float64{}
	top := 0.0
	for rows.Next() {
		var seq int64
		var score float64
		if err := rows.Scan(&seq, &score); err != nil {
			return nil, err
		}
		out[seq] = score
		top = math.Max(top, score)
	}
	if top > 0 {
		for seq := range out {
			out[seq] /= top
		}
	}
	return out, rows.Err()
}

// matchExpr turns free text into an FTS5 query: every meaningful word,
// quoted so punctuation cannot be read as query syntax, any of which may match.
func matchExpr(text string) string {
	seen := map[string]bool{}
	var terms []string
	for _, w := range Words(text) {
		if IsStopWord(w) || seen[w] {
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

// loadVectors reads every visible vector made by the current embedder.
func (s *Store) loadVectors(ctx context.Context, where string, args []any) ([]storedVector, error) {
	if s.embedder == nil {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT m.seq, e.vec FROM embeddings e JOIN memories m ON m.seq = e.seq
		WHERE e.model = ? AND e.content_hash = m.content_hash AND `+where, append([]any{s.embedder.Model()}, args...)...)
	if err != nil {
		return nil, s.explain(fmt.Errorf("load vectors: %w", err))
	}
	defer rows.Close()
	var out []storedVector
	for rows.Next() {
		var v storedVector
		var blob []byte
		if err := rows.Scan(&v.seq, &blob); err != nil {
			return nil, err
		}
		if len(blob) < 4 {
			continue
		}
		v.scale = math.Float32frombits(binary.LittleEndian.Uint32(blob))
		v.q = make([]int8, len(blob)-4)
		for i, b := range blob[4:] {
			v.q[i] = int8(b)
		}
		out = append(out, v)
	}
	return out, rows.Err()
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

// nearest scores the best vector candidates for one query, scaled to [0, 1]
// between the weakest and the strongest candidate.
func nearest(query []float32, vectors []storedVector) map[int64]float64 {
	type scored struct {
		seq int64
		cos float64
	}
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
	sort.Slice(all, func(i, j int) bool { return all[i].cos > all[j].cos })
	if len(all) > candidatePool {
		all = all[:candidatePool]
	}
	out := make(map[int64]float64, len(all))
	if len(all) == 0 {
		return out
	}
	hi, lo := all[0].cos, all[len(all)-1].cos
	for _, c := range all {
		if hi > lo {
			out[c.seq] = (c.cos - lo) / (hi - lo)
		} else {
			out[c.seq] = 1
		}
	}
	return out
}

// fuse blends the two candidate lists. A memory only one side proposed gets
// nothing from the other.
func fuse(lex, vec map[int64]float64) map[int64]float64 {
	out := make(map[int64]float64, len(lex)+len(vec))
	for seq, s := range lex {
		out[seq] += lexicalWeight * s
	}
	for seq, s := range vec {
		out[seq] += vectorWeight * s
	}
	return out
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
