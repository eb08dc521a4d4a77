package postgres_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/internal/bench"
	"github.com/acolyte-dev/acolyte/internal/pgtest"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/postgres"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// TestMeasureTextSearchConfig is the measurement behind textSearchConfig:
// recall@5 on the LoCoMo development split, each conversation a team of
// its own, for each candidate configuration, lexical only and fused with
// the static embedder, beside the local store on the same data. It runs
// only when ACOLYTE_LOCOMO_DIR names the split's directory:
//
//	ACOLYTE_LOCOMO_DIR=../shared/bench/locomo-dev go test -run TestMeasureTextSearchConfig -v ./memory/postgres/
func TestMeasureTextSearchConfig(t *testing.T) {
	docs, queries := locomoDev(t)
	c := start(t)
	ctx := t.Context()

	recall := func(search func(q bench.Query) []memory.Result, idOf map[string]string) float64 {
		return recallOf(queries, search, idOf)
	}
	team := func(group string) string { return "g" + filterName(group) }

	for _, emb := range []struct {
		name string
		e    memory.Embedder
	}{{"lexical", nil}, {"fused", static.New()}} {
		t.Logf("%-7s local SQLite             recall@5 %.3f", emb.name, localRecall(t, docs, queries, emb.e))

		db := c.database(t)
		s := c.open(t, "postgres", db, emb.e)
		teamIDs := map[string]string{}
		for _, d := range docs {
			a, err := s.Add(ctx, memory.Visibility{Team: team(d.Group)}, memory.Draft{Content: d.Content, Scope: memory.ScopeTeam})
			if err != nil {
				t.Fatal(err)
			}
			teamIDs[a.Memory.ID] = d.ID
		}
		for _, cfg := range []string{"english", "simple"} {
			c.srv.Admin(t, db, "ALTER TABLE team_memories DROP COLUMN fts",
				"ALTER TABLE team_memories ADD COLUMN fts tsvector GENERATED ALWAYS AS (to_tsvector('"+cfg+"', lexical)) STORED")
			postgres.SetTextSearchConfig(s, cfg)
			r := recall(func(q bench.Query) []memory.Result {
				rs, err := s.Search(ctx, memory.Visibility{Team: team(q.Group)}, memory.Query{Text: q.Query, Filter: memory.Filter{Limit: 5}})
				if err != nil {
					t.Fatal(err)
				}
				return rs
			}, teamIDs)
			t.Logf("%-7s PostgreSQL, %-8s     recall@5 %.3f", emb.name, cfg, r)
		}
	}
}

// filterName keeps the letters and digits of a group name, so it is a valid team name.
func filterName(s string) string {
	var out []rune
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			out = append(out, r)
		}
	}
	return string(out)
}

// locomoDev reads the LoCoMo dev split from ACOLYTE_LOCOMO_DIR, and skips
// the measurement when it is unset.
func locomoDev(t *testing.T) ([]bench.Doc, []bench.Query) {
	t.Helper()
	dir := os.Getenv("ACOLYTE_LOCOMO_DIR")
	if dir == "" {
		t.Skip("set ACOLYTE_LOCOMO_DIR to the LoCoMo dev split to measure")
	}
	docs, err := bench.ReadJSONL[bench.Doc](filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	queries, err := bench.ReadJSONL[bench.Query](filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return docs, queries
}

// localRecall is recall@5 of the local store with embedder e (nil:
// lexical only), each group its own project: the baseline a team figure
// is compared with.
func localRecall(t *testing.T, docs []bench.Doc, queries []bench.Query, e memory.Embedder) float64 {
	t.Helper()
	ctx := t.Context()
	local, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), e)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	localIDs := map[string]string{}
	for _, d := range docs {
		a, err := local.Add(ctx, memory.Visibility{ProjectKey: d.Group}, memory.Draft{Content: d.Content, Scope: memory.ScopeProject})
		if err != nil {
			t.Fatal(err)
		}
		localIDs[a.Memory.ID] = d.ID
	}
	return recallOf(queries, func(q bench.Query) []memory.Result {
		rs, err := local.Search(ctx, memory.Visibility{ProjectKey: q.Group}, memory.Query{Text: q.Query, Filter: memory.Filter{Limit: 5}})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}, localIDs)
}

// recallOf is the mean recall over queries of what search returns, whose
// ids idOf maps to corpus ids.
func recallOf(queries []bench.Query, search func(bench.Query) []memory.Result, idOf map[string]string) float64 {
	hits := 0.0
	for _, q := range queries {
		found := 0
		for _, r := range search(q) {
			if slices.Contains(q.Relevant, idOf[r.ID]) {
				found++
			}
		}
		hits += float64(found) / float64(len(q.Relevant))
	}
	return hits / float64(len(queries))
}

// TestMeasureTeamRecall is the measurement behind the team search's paths:
// recall@5 on the LoCoMo development split (each conversation a team of
// 369 to 680 memories) with the static embedder, through the local SQLite
// store, through the team store reading each team whole (its path for a
// team of at most wholeTeam memories, and searchScan's), and through the
// path of a large team on stock PostgreSQL (postings, cells, a crowd
// sample of 256), forced on these teams. It runs only when
// ACOLYTE_LOCOMO_DIR names the split's directory:
//
//	ACOLYTE_LOCOMO_DIR=../shared/bench/locomo-dev go test -run TestMeasureTeamRecall -v ./memory/postgres/
func TestMeasureTeamRecall(t *testing.T) {
	docs, queries := locomoDev(t)
	ctx := t.Context()
	e := static.New()
	team := func(group string) string { return "g" + filterName(group) }
	recall := func(search func(q bench.Query) []memory.Result, idOf map[string]string) float64 {
		return recallOf(queries, search, idOf)
	}

	t.Logf("local SQLite                        recall@5 %.3f", localRecall(t, docs, queries, e))

	c := start(t)
	db := c.database(t)
	var groups []string
	for _, d := range docs {
		if !slices.Contains(groups, team(d.Group)) {
			groups = append(groups, team(d.Group))
		}
	}
	for _, g := range groups {
		if _, err := postgres.Init(ctx, c.srv.URL("postgres", "postgres"), g); err != nil {
			t.Fatal(err)
		}
	}
	s := c.open(t, "postgres", db, e)
	teamIDs := map[string]string{}
	for _, d := range docs {
		a, err := s.Add(ctx, memory.Visibility{Team: team(d.Group)}, memory.Draft{Content: d.Content, Scope: memory.ScopeTeam})
		if err != nil {
			t.Fatal(err)
		}
		teamIDs[a.Memory.ID] = d.ID
	}
	search := func(q bench.Query) []memory.Result {
		rs, err := s.Search(ctx, memory.Visibility{Team: team(q.Group)}, memory.Query{Text: q.Query, Filter: memory.Filter{Limit: 5}})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	t.Logf("PostgreSQL, each team read whole    recall@5 %.3f", recall(search, teamIDs))
	postgres.SetScanOnly(s, true)
	t.Logf("PostgreSQL, searchScan              recall@5 %.3f", recall(search, teamIDs))
	postgres.SetScanOnly(s, false)
	for _, g := range groups {
		if err := postgres.CutCells(ctx, s, g, e.Model()); err != nil {
			t.Fatal(err)
		}
	}
	postgres.SetWholeTeam(s, 64)
	t.Logf("PostgreSQL, large-team path, stock  recall@5 %.3f", recall(search, teamIDs))
}

// TestMeasureTeamRecallPGlite is TestMeasureTeamRecall's pgvector figure:
// on PGlite, each conversation a team, read whole and then through the
// large-team path with its vector candidates from the HNSW index (built
// by a second team init once the memories are in). It runs only when
// ACOLYTE_LOCOMO_DIR names the split's directory and ACOLYTE_PGLITE is set:
//
//	ACOLYTE_PGLITE=1 ACOLYTE_LOCOMO_DIR=../shared/bench/locomo-dev go test -run TestMeasureTeamRecallPGlite -v ./memory/postgres/
func TestMeasureTeamRecallPGlite(t *testing.T) {
	docs, queries := locomoDev(t)
	url := pgtest.StartPGlite(t)
	ctx := t.Context()
	e := static.New()
	team := func(group string) string { return "g" + filterName(group) }
	for _, d := range docs {
		if _, err := postgres.Init(ctx, url, team(d.Group)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := postgres.Open(ctx, url, e)
	if err != nil {
		t.Fatal(err)
	}
	teamIDs := map[string]string{}
	for _, d := range docs {
		a, err := s.Add(ctx, memory.Visibility{Team: team(d.Group)}, memory.Draft{Content: d.Content, Scope: memory.ScopeTeam})
		if err != nil {
			t.Fatal(err)
		}
		teamIDs[a.Memory.ID] = d.ID
	}
	s.Close()
	if _, err := postgres.Init(ctx, url, ""); err != nil { // the model's HNSW index
		t.Fatal(err)
	}
	if s, err = postgres.Open(ctx, url, e); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !postgres.UsesHNSW(s, e.Model(), e.Dim()) {
		t.Fatal("no HNSW index of the model after init")
	}
	recall := func() float64 {
		return recallOf(queries, func(q bench.Query) []memory.Result {
			rs, err := s.Search(ctx, memory.Visibility{Team: team(q.Group)}, memory.Query{Text: q.Query, Filter: memory.Filter{Limit: 5}})
			if err != nil {
				t.Fatal(err)
			}
			return rs
		}, teamIDs)
	}
	timed := func() (float64, float64) {
		start := time.Now()
		r := recall()
		return r, float64(time.Since(start).Microseconds()) / 1000 / float64(len(queries))
	}
	r, ms := timed()
	t.Logf("PGlite, each team read whole         recall@5 %.3f, %.1f ms a search", r, ms)
	postgres.SetWholeTeam(s, 64)
	r, ms = timed()
	t.Logf("PGlite, large-team path, HNSW        recall@5 %.3f, %.1f ms a search", r, ms)
}
