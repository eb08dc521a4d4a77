package postgres_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/acolyte-dev/acolyte/internal/pgtest"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/internal/enginetest"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// TestPGlite runs the team database on PGlite, PostgreSQL 17 with
// pgvector 0.8.0 built in: acolyte's schema, pgvector's HNSW index
// through pgx, and the engine conformance suite. PGlite is one session
// with one superuser, so the suite's other team is kept out by acolyte's
// own filters here; row-level security is proven on the Debian server
// (TestPostgres/Isolation).
func TestPGlite(t *testing.T) {
	url := pgtest.StartPGlite(t)
	ctx := t.Context()
	r, err := postgres.Init(ctx, url, "red")
	if err != nil {
		t.Fatal(err)
	}
	if r.To != postgres.SchemaVersion() || !r.Vector {
		t.Fatalf("init on PGlite: %+v, want schema %d and the vector extension available", r, postgres.SchemaVersion())
	}
	t.Run("OneConnectionAtATime", func(t *testing.T) { testPGliteOneAtATime(t, url) })
	t.Run("Vector", func(t *testing.T) { testPGliteVector(t, url) })
	t.Run("Conformance", func(t *testing.T) {
		var (
			mu       sync.Mutex
			open     *postgres.Store
			openedIn string
		)
		enginetest.Run(t, enginetest.Harness{
			Scope: memory.ScopeTeam,
			Vis:   memory.Visibility{Team: "red", ProjectKey: "/src/a"},
			Other: memory.Visibility{Team: "blue", ProjectKey: "/src/a"},
			Open: func(t *testing.T, e memory.Embedder) memory.Engine {
				mu.Lock()
				defer mu.Unlock()
				// One connection at a time: the suite has done with the
				// engine it opened before (it reopens with another
				// embedder), so that one's pool goes first.
				if open != nil {
					open.Close()
				}
				// One database for all: each test starts from empty tables.
				if openedIn != t.Name() {
					pgliteExec(t, url, `TRUNCATE team_memories CASCADE`)
					openedIn = t.Name()
				}
				s, err := postgres.Open(t.Context(), url, e)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(s.Close)
				open = s
				return s
			},
		})
	})
}

// testPGliteVector checks what the team search's vector side rests on:
// pgvector 0.8.0 is there, and an HNSW index on cosine distance is built
// and answers a nearest-neighbour query sent by pgx with a parameter.
func testPGliteVector(t *testing.T, url string) {
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if pool.Config().MaxConns != 1 {
		t.Fatalf("the PGlite URL allows %d connections per pool, want 1", pool.Config().MaxConns)
	}
	var version string
	if err := pool.QueryRow(ctx, `SELECT default_version FROM pg_available_extensions WHERE name = 'vector'`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != "0.8.0" {
		t.Fatalf("pgvector %s is available, want 0.8.0 (the one @electric-sql/pglite 0.3.9 builds in)", version)
	}
	// 64 unit vectors at angles i/64 of a turn; the query lies between
	// 10 and 11, nearer 10.
	vec := func(turn float64) string {
		x, y := cosSin(turn)
		return fmt.Sprintf("[%g,%g,0]", x, y)
	}
	var rows [][]any
	for i := range 64 {
		rows = append(rows, []any{i, vec(float64(i) / 64)})
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, q := range []string{
			`CREATE EXTENSION IF NOT EXISTS vector`,
			`CREATE TABLE pglite_vectors (id integer PRIMARY KEY, v vector(3) NOT NULL)`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		for _, r := range rows {
			if _, err := tx.Exec(ctx, `INSERT INTO pglite_vectors VALUES ($1, $2::vector)`, r...); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `CREATE INDEX pglite_vectors_hnsw ON pglite_vectors USING hnsw (v vector_cosine_ops)`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	var plan []string
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// 64 rows are few enough for the planner to prefer a scan; the
		// test is that the index works, so make it the only way.
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			return err
		}
		const nearest = `SELECT id FROM pglite_vectors ORDER BY v <=> $1::vector LIMIT 3`
		rs, err := tx.Query(ctx, `EXPLAIN `+nearest, vec(10.4/64))
		if err != nil {
			return err
		}
		if plan, err = pgx.CollectRows(rs, pgx.RowTo[string]); err != nil {
			return err
		}
		rs, err = tx.Query(ctx, nearest, vec(10.4/64))
		if err != nil {
			return err
		}
		got, err = pgx.CollectRows(rs, pgx.RowTo[int])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "pglite_vectors_hnsw") {
		t.Fatalf("the nearest-neighbour query does not use the HNSW index:\n%s", strings.Join(plan, "\n"))
	}
	if fmt.Sprint(got) != "[10 11 9]" {
		t.Fatalf("nearest to the angle 10.4/64 by HNSW: %v, want [10 11 9]", got)
	}
}

// testPGliteOneAtATime checks what server.mjs adds to PGlite's socket
// server: a second connection waits for the first to close instead of
// being refused, and starts a fresh session: the first one's open
// transaction is rolled back, and pgx's prepared statements, named after
// their SQL, do not collide with the first connection's.
func testPGliteOneAtATime(t *testing.T, url string) {
	ctx := t.Context()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	delete(cfg.RuntimeParams, "pool_max_conns")
	const probe = `SELECT count(*) FROM pg_class WHERE relname = $1`
	first, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := first.QueryRow(ctx, probe, "uncommitted").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Exec(ctx, `BEGIN; CREATE TABLE uncommitted (x int)`); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		n   int
		err error
	}
	second := make(chan answer, 1)
	go func() {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			second <- answer{err: err}
			return
		}
		defer conn.Close(ctx)
		var n int
		err = conn.QueryRow(ctx, probe, "uncommitted").Scan(&n)
		second <- answer{n, err}
	}()
	select {
	case a := <-second:
		t.Fatalf("a second connection was served while the first was open: %+v", a)
	case <-time.After(300 * time.Millisecond):
	}
	first.Close(ctx)
	select {
	case a := <-second:
		if a.err != nil || a.n != 0 {
			t.Fatalf("after the first connection closed mid-transaction, the second found %d tables named uncommitted (%v); want 0 and no error", a.n, a.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second connection was not served after the first closed")
	}
}

// pgliteExec runs a statement on its own connection, closed before the
// next one opens.
func pgliteExec(t *testing.T, url, q string) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestInitStripsPoolSettings: one URL serves team init (a single
// connection) and the pool, so a pool setting in it must not reach the
// server, which refuses a setting it does not know.
func TestInitStripsPoolSettings(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.URL("postgres", srv.NewDatabase(t)) + "&pool_max_conns=1"
	if _, err := postgres.Init(t.Context(), url, "red"); err != nil {
		t.Fatalf("init with pool_max_conns in the URL: %v", err)
	}
	s, err := postgres.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func cosSin(turn float64) (float64, float64) {
	return math.Cos(2 * math.Pi * turn), math.Sin(2 * math.Pi * turn)
}
