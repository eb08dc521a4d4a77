package postgres_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/acolyte-dev/acolyte/internal/pgtest"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// TestPGliteLargeTeam drives the search path of a large team on PGlite
// with pgvector: team init enables the extension, fills the vector column
// from the stored float32s exactly, builds the HNSW index of each model
// present (a second init after the first memories), and a search takes
// its vector candidates from that index and finds what the whole-team
// scan finds.
func TestPGliteLargeTeam(t *testing.T) {
	url := pgtest.StartPGlite(t)
	ctx := t.Context()
	r, err := postgres.Init(ctx, url, "red")
	if err != nil || !r.VectorEnabled {
		t.Fatalf("init on PGlite: %+v (%v), want pgvector enabled", r, err)
	}
	e := static.New()
	vis := memory.Visibility{Team: "red"}
	var espresso string
	func() {
		s, err := postgres.Open(ctx, url, e)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, content := range append(benchCorpus(300), "The espresso machine in the kitchen needs descaling every month") {
			a, err := s.Add(ctx, vis, memory.Draft{Content: content, Scope: memory.ScopeTeam})
			if err != nil {
				t.Fatal(err)
			}
			espresso = a.Memory.ID
		}
	}()
	// The model is present now: init builds its index.
	if _, err := postgres.Init(ctx, url, ""); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var (
		indexes int
		v       string
		raw     []byte
	)
	err = pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'team\_hnsw\_%'), v::text, vec FROM team_embeddings WHERE id = $1`, espresso).Scan(&indexes, &v, &raw)
	pool.Close()
	if err != nil {
		t.Fatal(err)
	}
	if indexes != 1 {
		t.Fatalf("%d HNSW indexes after init, want 1 (one model)", indexes)
	}
	want := postgres.DecodeVector(raw)
	var got []float32
	for _, f := range strings.Split(strings.Trim(v, "[]"), ",") {
		x, err := strconv.ParseFloat(f, 32)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, float32(x))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the vector column holds %v, the stored float32s are %v", got, want)
	}

	// The search's query is one the index answers (with 301 rows the
	// planner would rather scan, so scanning is made the dear way), and
	// so is a search's filtered by kind.
	explainPool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	// Half the team, and the espresso memory, become rules, for the
	// searches filtered by kind below.
	if _, err := explainPool.Exec(ctx, `UPDATE team_memories SET kind = 'rule' WHERE sample % 2 = 0 OR id = $1`, espresso); err != nil {
		t.Fatal(err)
	}
	vecArg := "[" + strings.Repeat("0.1,", e.Dim()-1) + "0.1]"
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{postgres.HNSWQuery(e.Model(), e.Dim()), []any{"red", vecArg, 10}},
		{postgres.HNSWKindQuery(e.Model(), e.Dim()), []any{"red", vecArg, 10, "rule"}},
	} {
		var plan []string
		err = pgx.BeginFunc(ctx, explainPool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, `EXPLAIN `+q.sql, q.args...)
			if err != nil {
				return err
			}
			plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(plan, "\n"), "team_hnsw_") {
			t.Fatalf("the search's nearest-vector query does not use the HNSW index:\n%s", strings.Join(plan, "\n"))
		}
	}
	explainPool.Close()

	s, err := postgres.Open(ctx, url, e)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	postgres.SetWholeTeam(s, 40)
	if !postgres.UsesHNSW(s, e.Model(), e.Dim()) {
		t.Fatal("the store does not know the model's HNSW index")
	}
	search := func(text string) []string {
		t.Helper()
		// No relevance floor: a question in words no memory holds is
		// answered by vectors alone, which the floor (on words) would drop.
		rs, err := s.Search(ctx, vis, memory.Query{Text: text, NoFloor: true})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	for _, q := range []string{"cleaning limescale from the coffee maker", "how do I reach the staging database"} {
		got := search(q)
		postgres.SetScanOnly(s, true)
		scan := search(q)
		postgres.SetScanOnly(s, false)
		same := 0
		for _, id := range got {
			if slices.Contains(scan, id) {
				same++
			}
		}
		if same < min(7, len(scan)) {
			t.Errorf("%q: the HNSW path found %v, the scan %v", q, got, scan)
		}
		if q == "cleaning limescale from the coffee maker" && !slices.Contains(got[:min(3, len(got))], espresso) {
			t.Errorf("%q: the HNSW path found %v, want %s in the first 3", q, got, espresso)
		}
	}
	// Filtered by kind (half the team and the espresso memory are rules,
	// above): the HNSW path, not the scan, finds only rules, the scan's.
	rules := func(q string) []memory.Result {
		t.Helper()
		rs, err := s.Search(ctx, vis, memory.Query{Text: q, NoFloor: true, Filter: memory.Filter{Kind: memory.KindRule}})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	for _, q := range []string{"cleaning limescale from the coffee maker", "how do I reach the staging database"} {
		scans := postgres.Scans(s)
		got := rules(q)
		if postgres.Scans(s) != scans {
			t.Errorf("%q, rules: the search read the whole team, not the indexes", q)
		}
		postgres.SetScanOnly(s, true)
		scan := rules(q)
		postgres.SetScanOnly(s, false)
		same := 0
		for _, r := range got {
			if r.Kind != memory.KindRule {
				t.Errorf("%q, rules: found %s, a %s", q, r.ID, r.Kind)
			}
			if slices.ContainsFunc(scan, func(x memory.Result) bool { return x.ID == r.ID }) {
				same++
			}
		}
		if len(got) == 0 || len(got) != len(scan) || same < min(7, len(scan)) ||
			!slices.ContainsFunc(got[:min(3, len(got))], func(r memory.Result) bool { return r.ID == scan[0].ID }) {
			t.Errorf("%q, rules: the HNSW path found %v, the scan %v", q, resultIDs(got), resultIDs(scan))
			continue
		}
		if q == "cleaning limescale from the coffee maker" && !slices.ContainsFunc(got[:min(3, len(got))], func(r memory.Result) bool { return r.ID == espresso }) {
			t.Errorf("%q, rules: the HNSW path found %v, want %s in the first 3", q, resultIDs(got), espresso)
		}
	}
}
