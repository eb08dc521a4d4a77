// Package bench runs retrieval benchmarks in the generic format described in
// shared/bench/README.md: a corpus of memories split into isolated groups and
// queries with the ids of their relevant memories. It drives the real store
// and the real search, so a figure here is a figure for `acolyte search`.
package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// Doc is one line of corpus.jsonl. Topic is not part of the format: it is
// set from a headings file (see Headings), as the AGENTS.md import files a
// rule under its section headings.
type Doc struct {
	ID      string `json:"id"`
	Group   string `json:"group"`
	Content string `json:"content"`
	Date    string `json:"date,omitempty"`
	Topic   string `json:"-"`
	// Globs scope the memory to the files they match (memory.Memory.Globs),
	// as a rule file's front matter does; optional.
	Globs []string `json:"globs,omitempty"`
}

// Headings is one line of a headings file: the section headings, outermost
// first, that enclosed a corpus memory in the file it was cut from. The
// benchmark files the memory under them as the AGENTS.md import would.
type Headings struct {
	ID       string   `json:"id"`
	Headings []string `json:"headings"`
}

// Query is one line of queries.jsonl.
type Query struct {
	ID       string   `json:"id"`
	Group    string   `json:"group"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
	Category int      `json:"category,omitempty"`
	// Paths are the files at hand when the question is asked
	// (memory.Query.Paths); optional.
	Paths []string `json:"paths,omitempty"`
}

// ReadJSONL decodes a JSON Lines file, naming the line of any error.
func ReadJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// Report is what a run measured.
type Report struct {
	Embedder   string          `json:"embedder"`
	Queries    int             `json:"queries"`
	Memories   int             `json:"memories"`
	Recall     map[int]float64 `json:"recall"`
	NDCG       map[int]float64 `json:"ndcg"`
	MRR        float64         `json:"mrr"`
	IndexTime  time.Duration   `json:"index_ns"`
	P50        time.Duration   `json:"search_p50_ns"`
	P95        time.Duration   `json:"search_p95_ns"`
	ByCategory map[int]float64 `json:"recall_at_first_k_by_category,omitempty"`
	Method     string          `json:"method"`
	// Empty is the share of queries that found nothing relevant.
	Empty float64 `json:"empty"`
	// CrossEmpty is Empty for the queries asked of another group (see
	// Options.Cross); nil when the queries name one group.
	CrossEmpty *float64 `json:"cross_empty,omitempty"`
	// Returned is the mean number of results a query got, of at most the
	// largest k: what a search costs its reader.
	Returned float64 `json:"returned_mean"`
}

// Options say how Run searches.
type Options struct {
	Method memory.Method
	// NoFloor returns the best matches even when none is relevant.
	NoFloor bool
	// Cross asks each query of one group against the next group's
	// memories (groups in order of name), where nothing is relevant: the
	// share that finds nothing measures the relevance floor.
	Cross bool
	// NoPaths asks each query without its files at hand, and OnlyPath
	// keeps only the memories scoped to them: the path stage measured
	// against search by meaning alone.
	NoPaths, OnlyPath bool
}

// groupKey makes each benchmark group its own project, so a query sees only
// its own group's memories, exactly as a repository sees only its own.
func groupKey(g string) string { return "bench:" + g }

// Index stores the corpus, one memory per document, group by group.
func Index(ctx context.Context, s *sqlite.Store, docs []Doc, progress func(done, total int)) (time.Duration, error) {
	groups := map[string][]memory.Memory{}
	var order []string
	for _, d := range docs {
		m := memory.Memory{ID: d.ID, Kind: memory.KindStored, Content: d.Content, Topic: d.Topic, Source: "bench", Globs: memory.NormalizeGlobs(d.Globs)}
		if t, ok := parseDate(d.Date); ok {
			m.CreatedAt, m.UpdatedAt = t, t
		}
		if _, ok := groups[d.Group]; !ok {
			order = append(order, d.Group)
		}
		groups[d.Group] = append(groups[d.Group], m)
	}
	start := time.Now()
	done := 0
	for _, g := range order {
		if _, err := s.ReplaceScope(ctx, memory.ScopeProject, groupKey(g), groups[g]); err != nil {
			return 0, fmt.Errorf("index group %s: %w", g, err)
		}
		done += len(groups[g])
		if progress != nil {
			progress(done, len(docs))
		}
	}
	// A layered embedder's model vectors, which a bulk write leaves for
	// later: the benchmark measures the settled store.
	if _, err := s.Fill(ctx, nil); err != nil {
		return 0, fmt.Errorf("embed the corpus: %w", err)
	}
	return time.Since(start), nil
}

// LoCoMo's dates read like "1:56 pm on 8 May, 2023".
func parseDate(s string) (time.Time, bool) {
	for _, layout := range []string{"3:04 pm on 2 January, 2006", time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Run searches every query and scores the results at each cut-off in ks.
func Run(ctx context.Context, s *sqlite.Store, queries []Query, ks []int, o Options, progress func(done, total int)) (Report, error) {
	return run(ctx, target{
		engine: s, embedder: s.Embedder(), scope: memory.ScopeProject,
		vis: func(group string) memory.Visibility { return memory.Visibility{ProjectKey: groupKey(group)} },
	}, queries, ks, o, progress)
}

// target is the engine a run searches and how a group is found in it.
type target struct {
	engine   memory.Engine
	embedder memory.Embedder
	scope    memory.Scope
	vis      func(group string) memory.Visibility
	// docIDs turns a memory's id into the corpus ids it holds; nil when
	// the memories keep the corpus's ids.
	docIDs map[string][]string
}

func run(ctx context.Context, s target, queries []Query, ks []int, o Options, progress func(done, total int)) (Report, error) {
	slices.Sort(ks)
	next := map[string]string{}
	if o.Cross {
		var groups []string
		for _, q := range queries {
			if !slices.Contains(groups, q.Group) {
				groups = append(groups, q.Group)
			}
		}
		slices.Sort(groups)
		for i, g := range groups {
			next[g] = groups[(i+1)%len(groups)]
		}
	}
	depth := ks[len(ks)-1]
	r := Report{Queries: len(queries), Recall: map[int]float64{}, NDCG: map[int]float64{}, ByCategory: map[int]float64{}}
	if s.embedder != nil {
		r.Embedder = s.embedder.Model()
	}
	latencies := make([]time.Duration, 0, len(queries))
	catCount := map[int]int{}
	for i, q := range queries {
		group := q.Group
		if o.Cross {
			group = next[group]
		}
		mq := memory.Query{Text: q.Query, Filter: memory.Filter{Scope: s.scope, Limit: depth}, Method: o.Method, NoFloor: o.NoFloor}
		if !o.NoPaths {
			mq.Paths, mq.OnlyPath = q.Paths, o.OnlyPath && len(q.Paths) > 0
		}
		start := time.Now()
		results, err := s.engine.Search(ctx, s.vis(group), mq)
		if err != nil {
			return r, fmt.Errorf("query %s: %w", q.ID, err)
		}
		latencies = append(latencies, time.Since(start))
		if len(results) == 0 {
			r.Empty++
		}
		r.Returned += float64(len(results))
		ranked := make([]string, 0, len(results))
		for _, res := range results {
			if s.docIDs == nil {
				ranked = append(ranked, res.ID)
			} else {
				ranked = append(ranked, s.docIDs[res.ID]...)
			}
		}
		relevant := map[string]bool{}
		for _, id := range q.Relevant {
			relevant[id] = true
		}
		for _, k := range ks {
			r.Recall[k] += recallAt(ranked, relevant, k)
			r.NDCG[k] += ndcgAt(ranked, relevant, k)
		}
		r.ByCategory[q.Category] += recallAt(ranked, relevant, ks[0])
		catCount[q.Category]++
		for j, id := range ranked {
			if relevant[id] {
				r.MRR += 1 / float64(j+1)
				break
			}
		}
		if progress != nil {
			progress(i+1, len(queries))
		}
	}
	if n := float64(len(queries)); n > 0 {
		for _, k := range ks {
			r.Recall[k] /= n
			r.NDCG[k] /= n
		}
		r.MRR /= n
		r.Empty /= n
		r.Returned /= n
	}
	for c, n := range catCount {
		r.ByCategory[c] /= float64(n)
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	r.P50 = percentile(latencies, 0.50)
	r.P95 = percentile(latencies, 0.95)
	return r, nil
}

func recallAt(ranked []string, relevant map[string]bool, k int) float64 {
	if len(relevant) == 0 {
		return 0
	}
	hits := 0
	for _, id := range ranked[:min(k, len(ranked))] {
		if relevant[id] {
			hits++
		}
	}
	return float64(hits) / float64(len(relevant))
}

// ndcgAt uses binary relevance, as the TypeScript Acolyte's benchmark does.
func ndcgAt(ranked []string, relevant map[string]bool, k int) float64 {
	var dcg, ideal float64
	for i, id := range ranked[:min(k, len(ranked))] {
		if relevant[id] {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	for i := range min(k, len(relevant)) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(math.Ceil(p*float64(len(sorted))))-1)]
}
