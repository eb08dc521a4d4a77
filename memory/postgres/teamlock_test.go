package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/internal/enginetest"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// The lock attacks of issue 35 (item 3): every team shares acolyte's
// tables, and row-level security separates their rows, not their locks.
// alice (red) takes every lock her grants let her take, on her own
// connection, in a transaction she leaves open; while she holds it bob
// (blue) must still search, remember and forget, and the administrator
// still run team init. Success within a deadline of a few seconds is
// the assertion, never a measured time.

// blueDeadline bounds bob's calls: beyond the server's lock timeout (2 s),
// which is what a blocked call runs into.
const blueDeadline = 4 * time.Second

// lockTables are acolyte's tables.
var lockTables = []string{"team_memories", "team_embeddings", "team_terms", "team_sketches", "team_centroids",
	"team_removals", "team_edits", "acolyte_schema"}

var lockModes = []string{"ACCESS SHARE", "ROW SHARE", "ROW EXCLUSIVE", "SHARE UPDATE EXCLUSIVE", "SHARE",
	"SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"}

// lockRoads are what alice runs, by name, each in its own transaction.
func lockRoads() []struct{ name, sql string } {
	var roads []struct{ name, sql string }
	add := func(name, sql string) { roads = append(roads, struct{ name, sql string }{name, sql}) }
	for _, table := range lockTables {
		for _, mode := range lockModes {
			add("LOCK "+table+" "+mode, `LOCK TABLE public.`+table+` IN `+mode+` MODE`)
		}
		for _, strength := range []string{"UPDATE", "NO KEY UPDATE", "SHARE", "KEY SHARE"} {
			add("SELECT FOR "+strength+" "+table, `SELECT * FROM public.`+table+` FOR `+strength)
		}
	}
	// Her own team's rows, changed and left uncommitted: the shared index
	// tables included, which every team's writes touch.
	add("UPDATE team_memories", `UPDATE public.team_memories SET recalled_at = now()`)
	add("UPDATE team_memories content", `UPDATE public.team_memories SET topic = 'held'`)
	add("UPDATE team_embeddings", `UPDATE public.team_embeddings SET vec = vec`)
	add("UPDATE team_terms", `UPDATE public.team_terms SET topic = topic`)
	add("UPDATE team_sketches", `UPDATE public.team_sketches SET cell = cell`)
	add("UPDATE team_centroids", `UPDATE public.team_centroids SET dim = dim`)
	add("INSERT team_centroids", `INSERT INTO public.team_centroids (team, model, dim, centroids) VALUES ('red', 'm', 1, '\x0000803f')`)
	add("DELETE team_terms", `DELETE FROM public.team_terms`)
	add("DELETE team_memories", `DELETE FROM public.team_memories`)
	add("DELETE team_embeddings", `DELETE FROM public.team_embeddings`)
	// Through objects of her own: LOCK TABLE on a view locks its tables,
	// a child table locks its parent, a foreign key its referenced table.
	add("LOCK a view of team_memories", `CREATE TEMP VIEW mine AS SELECT * FROM public.team_memories;
		LOCK TABLE mine IN ACCESS EXCLUSIVE MODE`)
	// (public is writable, as in a database made before PostgreSQL 15.)
	add("child of team_memories", `CREATE TABLE public.mine () INHERITS (public.team_memories)`)
	add("foreign key to team_memories", `CREATE TABLE public.mine (team text, id text, FOREIGN KEY (team, id) REFERENCES public.team_memories (team, id))`)
	// The advisory lock team init took, held by session and by transaction.
	add("advisory session lock", fmt.Sprintf(`SELECT pg_advisory_lock(%d)`, int64(postgres.SchemaLock)))
	add("advisory transaction lock", fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, int64(postgres.SchemaLock)))
	return roads
}

func testHeldLocks(t *testing.T, c *cluster) {
	ctx := t.Context()
	db := c.database(t)
	e := enginetest.Concepts("m")
	red, blue := memory.Visibility{Team: "red"}, memory.Visibility{Team: "blue"}
	c.srv.Admin(t, db, `GRANT CREATE ON SCHEMA public TO PUBLIC`)
	alice, bob := c.open(t, "alice", db, e), c.open(t, "bob", db, e)
	for _, content := range []string{"red deploys through bastion-2", "red rotates the staging keys on Monday"} {
		if _, err := alice.Add(ctx, red, memory.Draft{Content: content, Scope: memory.ScopeTeam}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bob.Add(ctx, blue, memory.Draft{Content: "blue launch window is Tuesday", Scope: memory.ScopeTeam}); err != nil {
		t.Fatal(err)
	}
	for i, road := range lockRoads() {
		t.Run(road.name, func(t *testing.T) {
			conn, err := pgx.Connect(ctx, c.srv.URL("alice", db))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			// Her session's own bounds are hers to set: none.
			if _, err := conn.Exec(ctx, `SET lock_timeout = 0; SET statement_timeout = 0; SET idle_in_transaction_session_timeout = 0`); err != nil {
				t.Fatal(err)
			}
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.Background())
			if _, err := tx.Exec(ctx, road.sql); err != nil {
				t.Logf("refused: %v", err)
				return
			}
			bobCalls(t, bob, blue, i)
		})
	}
	// team init, as the administrator, while alice holds the lock it took.
	t.Run("TeamInitBesideAdvisoryLock", func(t *testing.T) {
		conn, err := pgx.Connect(ctx, c.srv.URL("alice", db))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(postgres.SchemaLock)); err != nil {
			t.Fatal(err)
		}
		initCtx, cancel := context.WithTimeout(ctx, 8*time.Second)
		defer cancel()
		if _, err := postgres.Init(initCtx, c.srv.URL("postgres", db), ""); err != nil {
			t.Fatalf("team init while alice holds the advisory lock: %v", err)
		}
	})
}

// testInitGivesUp: a read alice leaves open on a table a migration alters
// is one lock no grant can take from a member. team init must then give up
// within its lock timeout, change nothing, say which session to end, and
// migrate once that session is gone.
func testInitGivesUp(t *testing.T, c *cluster) {
	ctx := t.Context()
	db := c.srv.NewDatabase(t)
	var v5 []string
	for v := 1; v <= 5; v++ {
		v5 = append(v5, postgres.Migration(v))
	}
	c.srv.Admin(t, db, append(v5, "UPDATE acolyte_schema SET version = 5")...)
	conn, err := pgx.Connect(ctx, c.srv.URL("alice", db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT count(*) FROM team_embeddings`); err != nil {
		t.Fatal(err)
	}
	initCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err = postgres.Init(initCtx, c.srv.URL("postgres", db), "")
	if err == nil || !strings.Contains(err.Error(), "pg_terminate_backend") || !strings.Contains(err.Error(), "55P03") {
		t.Fatalf("team init beside alice's open read: %v, want it to give up at its lock timeout and name the fix", err)
	}
	t.Logf("team init gave up: %v", err)
	admin, err := pgx.Connect(ctx, c.srv.URL("postgres", db))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if n := mustCount(t, admin, `SELECT version FROM acolyte_schema`); n != 5 {
		t.Fatalf("the schema is at version %d after the init that gave up, want 5", n)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := postgres.Init(ctx, c.srv.URL("postgres", db), ""); err != nil || r.To != postgres.SchemaVersion() {
		t.Fatalf("team init once alice's read ended: %+v (%v)", r, err)
	}
}

// bobCalls is blue's work while red holds a lock: a search that finds
// blue's memory, a remember and a forget, each of which must succeed
// within blueDeadline.
func bobCalls(t *testing.T, bob *postgres.Store, blue memory.Visibility, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), blueDeadline)
	defer cancel()
	rs, err := bob.Search(ctx, blue, memory.Query{Text: "launch window"})
	if err != nil || len(rs) == 0 {
		t.Errorf("bob's search: %d results (%v)", len(rs), err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), blueDeadline)
	defer cancel()
	added, err := bob.Add(ctx, blue, memory.Draft{Content: fmt.Sprintf("blue note %d: %s", n, strings.Repeat("x", n%7)), Scope: memory.ScopeTeam})
	if err != nil {
		t.Errorf("bob's remember: %v", err)
		return
	}
	ctx, cancel = context.WithTimeout(t.Context(), blueDeadline)
	defer cancel()
	if _, err := bob.Delete(ctx, blue, added.Memory.ID); err != nil {
		t.Errorf("bob's forget: %v", err)
	}
}
