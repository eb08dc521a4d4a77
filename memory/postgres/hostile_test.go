package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/acolyte-dev/acolyte/internal/pgtest"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/internal/enginetest"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// The hostile-member suite: each attack is what a member who has read
// schema.go would try with plain SQL on their own connection, as an
// ordinary role with nothing acolyte does not grant every member. alice
// (red) is the attacker; carol (red) a teammate she would like to frame;
// bob (blue) the other team; dave is in both teams. Each attack must fail
// and reveal nothing, and the superuser then checks what it left behind.
//
// It runs on the Debian server (TestPostgres/Hostile: real login roles, the
// schema owned by a non-superuser) and on PGlite (TestPGliteHostile: one
// superuser session, so each member's connection begins with SET SESSION
// AUTHORIZATION, which a real member could not undo; the attacks never try).

// hostileEnv is a team database with teams red and blue and the members
// above, migrated by acolyte.
type hostileEnv struct {
	// as runs f on a new connection as role, closed before as returns
	// (PGlite serves one connection at a time).
	as func(t *testing.T, role string, f func(c *pgx.Conn))
	// admin runs statements as a superuser, whom row-level security does
	// not restrict, to look at what an attack left behind.
	admin func(t *testing.T, f func(c *pgx.Conn))
}

// The seeded rows. bob's memory is the prize; ids are fixed strings, since
// no validation stands between plain SQL and the table.
const (
	bobID   = "01HOSTILEBOBBLUE000000000A"
	bobText = "blue team launch code is Tuesday"
	carolID = "01HOSTILECAROLRED000000000"
	aliceID = "01HOSTILEALICERED000000000"
	daveID  = "01HOSTILEDAVERED0000000000"
	// freshID exists in no team: an attack's outcome for it is what an
	// attacker sees when the id is not there.
	freshID = "01HOSTILENOSUCHID000000000"
)

// insertMemory is the INSERT acolyte sends, written by hand.
func insertMemory(ctx context.Context, c *pgx.Conn, id, team, content string) error {
	_, err := c.Exec(ctx, `INSERT INTO team_memories (id, team, kind, content, content_hash, lexical, created_at, updated_at, tokens)
		VALUES ($1, $2, 'stored', $3, md5($3), $3, now(), now(), 5)`, id, team, content)
	return err
}

// seedHostile writes the victims' rows through their own connections, as
// acolyte would: a memory each, bob's with a vector, its sketch and its
// team's centroids, and an edit and a removal in blue's audit.
func seedHostile(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	env.as(t, "bob", func(c *pgx.Conn) {
		for _, q := range []func() error{
			func() error { return insertMemory(ctx, c, bobID, "blue", bobText) },
			func() error { return insertMemory(ctx, c, "01HOSTILEBOBGONE0000000000", "blue", "blue retro notes") },
			func() error {
				_, err := c.Exec(ctx, `INSERT INTO team_embeddings (id, team, model, vec) VALUES ($1, 'blue', 'm', '\x0000803f')`, bobID)
				return err
			},
			func() error {
				_, err := c.Exec(ctx, `INSERT INTO team_sketches (id, model, team, cell, sketch) VALUES ($1, 'm', 'blue', 0, B'1')`, bobID)
				return err
			},
			func() error {
				_, err := c.Exec(ctx, `INSERT INTO team_centroids (team, model, dim, centroids) VALUES ('blue', 'm', 1, '\x0000803f')`)
				return err
			},
			func() error {
				_, err := c.Exec(ctx, `UPDATE team_memories SET content = 'blue retro notes, revised' WHERE id = '01HOSTILEBOBGONE0000000000'`)
				return err
			},
			func() error {
				_, err := c.Exec(ctx, `SELECT acolyte_forget('blue', ARRAY['01HOSTILEBOBGONE0000000000'])`)
				return err
			},
		} {
			if err := q(); err != nil {
				t.Fatalf("bob seeding blue: %v", err)
			}
		}
	})
	for role, id := range map[string]string{"carol": carolID, "alice": aliceID, "dave": daveID} {
		env.as(t, role, func(c *pgx.Conn) {
			if err := insertMemory(ctx, c, id, "red", role+" wrote this for red"); err != nil {
				t.Fatalf("%s seeding red: %v", role, err)
			}
		})
	}
}

// sqlState is the outcome of a statement as an attacker sees it: the
// SQLSTATE of its error, or "ok" and the rows it affected.
func sqlState(tag pgconn.CommandTag, err error) string {
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		return pe.Code
	case err != nil:
		return err.Error()
	}
	return fmt.Sprintf("ok %d", tag.RowsAffected())
}

// attempt runs q in a transaction it rolls back, so an attack that works
// leaves no trace for the next one to trip over, and returns its outcome.
func attempt(ctx context.Context, c *pgx.Conn, q string, args ...any) string {
	tx, err := c.Begin(ctx)
	if err != nil {
		return err.Error()
	}
	defer tx.Rollback(ctx)
	return sqlState(tx.Exec(ctx, q, args...))
}

// count runs a count query as whoever c is; an error counts as nothing
// seen, which is what a refusal shows the attacker.
func count(ctx context.Context, c *pgx.Conn, q string, args ...any) int {
	var n int
	if err := c.QueryRow(ctx, q, args...).Scan(&n); err != nil {
		return 0
	}
	return n
}

func mustCount(t *testing.T, c *pgx.Conn, q string, args ...any) int {
	t.Helper()
	var n int
	if err := c.QueryRow(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// bobIntact checks, as the superuser, that bob's memory is where bob left
// it, as he wrote it, and that blue holds nothing else.
func bobIntact(t *testing.T, env hostileEnv) {
	t.Helper()
	env.admin(t, func(c *pgx.Conn) {
		var team, content, author string
		err := c.QueryRow(t.Context(), `SELECT team, content, author FROM team_memories WHERE id = $1`, bobID).Scan(&team, &content, &author)
		if err != nil || team != "blue" || content != bobText || author != "bob" {
			t.Errorf("bob's memory after the attack: team %q, content %q, author %q (%v)", team, content, author, err)
		}
		if n := mustCount(t, c, `SELECT count(*) FROM team_memories WHERE team = 'blue'`); n != 1 {
			t.Errorf("blue holds %d memories after the attack, want bob's 1", n)
		}
		if n := mustCount(t, c, `SELECT count(*) FROM team_embeddings WHERE id = $1 AND team <> 'blue'`, bobID); n != 0 {
			t.Errorf("%d vectors of other teams point at bob's memory", n)
		}
	})
}

// runHostile runs every attack on env.
func runHostile(t *testing.T, env hostileEnv) {
	seedHostile(t, env)
	t.Run("ShadowCatalog", func(t *testing.T) { attackShadowCatalog(t, env) })
	t.Run("TempTriggerForgesAudit", func(t *testing.T) { attackTempTrigger(t, env) })
	t.Run("ProbeIDs", func(t *testing.T) { attackProbeIDs(t, env) })
	t.Run("EmbeddingOfOtherTeam", func(t *testing.T) { attackEmbedding(t, env) })
	t.Run("MoveAcrossTeams", func(t *testing.T) { attackMove(t, env) })
	t.Run("ForgeAuthorOnUpdate", func(t *testing.T) { attackForgeEdit(t, env) })
	t.Run("RescopeGlobs", func(t *testing.T) { attackRescopeGlobs(t, env) })
	t.Run("WritableSchema", func(t *testing.T) { attackWritableSchema(t, env) })
	t.Run("FunctionsFixSearchPath", func(t *testing.T) { checkSearchPaths(t, env) })
	t.Run("LeakyFunction", func(t *testing.T) { attackLeakyFunction(t, env) })
	t.Run("Statistics", func(t *testing.T) { attackStatistics(t, env) })
	t.Run("Truncate", func(t *testing.T) { attackTruncate(t, env) })
	t.Run("ForgetThroughFunctions", func(t *testing.T) { attackForgetFunctions(t, env) })
}

// attackForgetFunctions: removals run as the tables' owner since schema 8
// (teamlock.go), an owner whom row-level security does not bind when it is
// a superuser (PGlite's). alice asks them for blue's rows, by blue's name,
// by her own team's with blue's id, behind a shadowed pg_roles and as red's
// group role, and attaches the owner's postings trigger to a table of hers.
func attackForgetFunctions(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	for _, setup := range [][]string{nil, {shadowViewAllTeams, `SET search_path = pg_temp, public`}, {`SET ROLE acolyte_team_red`}} {
		env.as(t, "alice", func(c *pgx.Conn) {
			for _, q := range setup {
				if _, err := c.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			for _, q := range []string{
				`SELECT count(*) FROM public.acolyte_forget('blue', ARRAY['` + bobID + `'])`,
				`SELECT count(*) FROM public.acolyte_forget('red', ARRAY['` + bobID + `'])`,
				`SELECT public.acolyte_forget_vectors('blue', '` + bobID + `')`,
				`SELECT public.acolyte_forget_vectors('red', '` + bobID + `')`,
			} {
				if n := count(ctx, c, q); n != 0 {
					t.Errorf("alice (%v): %s: %d", setup, q, n)
				}
			}
		})
	}
	env.as(t, "alice", func(c *pgx.Conn) {
		for _, q := range []string{`CREATE TEMP TABLE team_memories (team text, id text, kind text, topic text, fts tsvector)`,
			`CREATE TRIGGER terms AFTER INSERT ON pg_temp.team_memories FOR EACH ROW EXECUTE FUNCTION public.acolyte_terms()`} {
			if got := sqlState(c.Exec(ctx, q)); !strings.HasPrefix(got, "ok") {
				t.Logf("%s: refused: %s", q, got)
				return
			}
		}
		if got := sqlState(c.Exec(ctx, `INSERT INTO pg_temp.team_memories VALUES ('blue', 'x', 'stored', '', 'planted')`)); strings.HasPrefix(got, "ok") {
			t.Errorf("the owner's postings trigger ran on alice's table: %s", got)
		}
	})
	env.admin(t, func(c *pgx.Conn) {
		if n := mustCount(t, c, `SELECT count(*) FROM team_terms WHERE id = 'x'`); n != 0 {
			t.Errorf("alice planted %d postings through the owner's trigger", n)
		}
		if n := mustCount(t, c, `SELECT count(*) FROM team_embeddings WHERE id = $1`, bobID); n != 1 {
			t.Errorf("bob's memory has %d vectors after alice's removals, want 1", n)
		}
	})
	bobIntact(t, env)
}

// attackLeakyFunction: a function of alice's in a query's WHERE, copying
// every value it is shown into her temporary table. Row-level security
// must filter the rows before her function sees them (only a superuser
// may mark a function LEAKPROOF, which would let it run first).
func attackLeakyFunction(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	env.as(t, "alice", func(c *pgx.Conn) {
		for _, q := range []string{
			`CREATE TEMP TABLE loot (v text)`,
			`CREATE FUNCTION pg_temp.leak(text) RETURNS boolean LANGUAGE plpgsql COST 0.0000001 AS $$ BEGIN
				INSERT INTO pg_temp.loot VALUES ($1); RETURN true; END $$`,
			`SELECT count(*) FROM team_memories WHERE pg_temp.leak(content) AND team = 'blue'`,
			`SELECT count(*) FROM team_memories WHERE pg_temp.leak(id) OR id = '` + bobID + `'`,
			`SELECT count(*) FROM team_removals WHERE pg_temp.leak(content)`,
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if n := mustCount(t, c, `SELECT count(*) FROM pg_temp.loot WHERE v IN ($1, $2, 'blue retro notes', 'blue retro notes, revised')`, bobText, bobID); n != 0 {
			t.Errorf("alice's function was shown %d of blue's values", n)
		}
	})
}

// attackStatistics: the planner's statistics hold the most common values
// of every column, of every team's rows; pg_stats must not show them to a
// member.
func attackStatistics(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	env.admin(t, func(c *pgx.Conn) {
		if _, err := c.Exec(ctx, `ANALYZE`); err != nil {
			t.Fatal(err)
		}
	})
	env.as(t, "alice", func(c *pgx.Conn) {
		if n := mustCount(t, c, `SELECT count(*) FROM pg_stats WHERE tablename LIKE 'team\_%'`); n != 0 {
			t.Errorf("alice reads %d rows of statistics of the team tables", n)
		}
	})
}

// attackTruncate: TRUNCATE passes by row-level security and by the
// triggers that audit removals, so no member may run it on any table.
func attackTruncate(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	env.as(t, "alice", func(c *pgx.Conn) {
		for _, table := range []string{"team_memories", "team_embeddings", "team_terms", "team_sketches", "team_centroids", "team_removals", "team_edits"} {
			if got := attempt(ctx, c, `TRUNCATE public.`+table+` CASCADE`); strings.HasPrefix(got, "ok") {
				t.Errorf("alice truncates %s", table)
			}
		}
	})
	bobIntact(t, env)
}

// checkSearchPaths: every function of acolyte's (pgvector's too, where the
// extension is enabled) fixes its search_path to the catalog, then pg_temp,
// so nothing a member creates is found by a name it leaves unqualified.
func checkSearchPaths(t *testing.T, env hostileEnv) {
	env.admin(t, func(c *pgx.Conn) {
		rows, err := c.Query(t.Context(), `SELECT p.proname::text, coalesce(array_to_string(p.proconfig, ' '), '') FROM pg_proc p
			WHERE p.proname LIKE 'acolyte\_%' AND p.pronamespace = 'public'::regnamespace ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		type fn struct{ name, config string }
		fns, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (fn, error) {
			var f fn
			return f, r.Scan(&f.name, &f.config)
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(fns) < 7 {
			t.Fatalf("found %d of acolyte's functions: %+v", len(fns), fns)
		}
		for _, f := range fns {
			if f.config != "search_path=pg_catalog, pg_temp" {
				t.Errorf("function %s runs with settings %q, want search_path=pg_catalog, pg_temp", f.name, f.config)
			}
		}
	})
}

// shadowViewAllTeams is a temporary pg_roles in which alice's membership
// of red answers for blue too, so a policy reading pg_roles unqualified
// takes her for a member of both.
const shadowViewAllTeams = `CREATE TEMP VIEW pg_roles AS
	SELECT ('acolyte_team_' || t)::name AS rolname, (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = 'acolyte_team_red') AS oid
	FROM unnest(ARRAY['red', 'blue']) t`

// attackShadowCatalog: catalog objects shadowed in pg_temp, with pg_temp
// first on the search path, then every read and write of blue's rows.
func attackShadowCatalog(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	shadows := map[string][]string{
		"view pg_roles": {shadowViewAllTeams},
		"table pg_roles": {`CREATE TEMP TABLE pg_roles (rolname name, oid oid)`,
			`INSERT INTO pg_roles SELECT 'acolyte_team_blue', r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = 'acolyte_team_red'`},
		"view pg_auth_members": {`CREATE TEMP VIEW pg_auth_members AS SELECT r.oid AS roleid, u.oid AS member, u.oid AS grantor, true AS admin_option
			FROM pg_catalog.pg_roles r, pg_catalog.pg_roles u WHERE u.rolname = current_user`},
		"functions pg_has_role, substr, starts_with, current_user, session_user": {
			`CREATE FUNCTION pg_temp.pg_has_role(name, oid, text) RETURNS boolean LANGUAGE sql AS 'SELECT true'`,
			`CREATE FUNCTION pg_temp.substr(name, integer) RETURNS text LANGUAGE sql AS $$SELECT 'blue'$$`,
			`CREATE FUNCTION pg_temp.starts_with(name, text) RETURNS boolean LANGUAGE sql AS 'SELECT true'`,
			`CREATE FUNCTION pg_temp."current_user"() RETURNS name LANGUAGE sql AS $$SELECT 'bob'::name$$`,
			`CREATE FUNCTION pg_temp."session_user"() RETURNS name LANGUAGE sql AS $$SELECT 'bob'::name$$`},
		"operators = and ~~": {
			`CREATE FUNCTION pg_temp.yes(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT true'`,
			`CREATE FUNCTION pg_temp.yes(name, text) RETURNS boolean LANGUAGE sql AS 'SELECT true'`,
			`CREATE OPERATOR pg_temp.= (LEFTARG = text, RIGHTARG = text, FUNCTION = pg_temp.yes)`,
			`CREATE OPERATOR pg_temp.~~ (LEFTARG = name, RIGHTARG = text, FUNCTION = pg_temp.yes)`},
	}
	paths := []string{`"$user", public`, `pg_temp, public`, `pg_temp, pg_catalog, public`, `public, pg_temp`}
	for name, setup := range shadows {
		for _, path := range paths {
			env.as(t, "alice", func(c *pgx.Conn) {
				for _, q := range setup {
					if _, err := c.Exec(ctx, q); err != nil {
						// The server refusing the shadow is the attack failing.
						t.Logf("%s: %s: refused: %v", name, q, err)
						return
					}
				}
				if _, err := c.Exec(ctx, `SET search_path = `+path); err != nil {
					t.Fatal(err)
				}
				for _, table := range []string{"team_memories", "team_embeddings", "team_terms", "team_sketches", "team_centroids", "team_removals", "team_edits"} {
					if n := count(ctx, c, `SELECT count(*) FROM public.`+table+` WHERE team = 'blue'`); n != 0 {
						t.Errorf("shadowing %s (search_path %s), alice reads %d of blue's rows in %s", name, path, n, table)
					}
				}
				if n := count(ctx, c, `SELECT count(*) FROM public.team_memories WHERE id = $1`, bobID); n != 0 {
					t.Errorf("shadowing %s (search_path %s), alice reads bob's memory by id", name, path)
				}
				if got := attempt(ctx, c, `INSERT INTO public.team_memories (id, team, kind, content, content_hash, lexical, created_at, updated_at, tokens)
					VALUES ('01HOSTILEPLANTED0000000000', 'blue', 'stored', 'planted', 'planted', 'planted', now(), now(), 1)`); strings.HasPrefix(got, "ok") {
					t.Errorf("shadowing %s (search_path %s), alice inserts into blue: %s", name, path, got)
				}
				for _, q := range []string{
					`UPDATE public.team_memories SET content = 'pwned' WHERE team = 'blue'`,
					`UPDATE public.team_memories SET team = 'red' WHERE id = '` + bobID + `'`,
					`UPDATE public.team_embeddings SET vec = '\x00000000' WHERE team = 'blue'`,
					`DELETE FROM public.team_memories WHERE team = 'blue'`,
				} {
					if got := attempt(ctx, c, q); strings.HasPrefix(got, "ok") && got != "ok 0" {
						t.Errorf("shadowing %s (search_path %s), alice: %s: %s", name, path, q, got)
					}
				}
			})
		}
	}
	bobIntact(t, env)
}

// attackTempTrigger: pg_trigger_depth() > 0 on a trigger of alice's own
// temporary table, and acolyte's own audit function fired by her table,
// each used to write audit rows in carol's name, at a time of her choosing.
func attackTempTrigger(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	forge := `CREATE FUNCTION pg_temp.forge() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
		INSERT INTO public.team_removals (team, id, kind, content, author, removed_by, removed_at)
			VALUES (NEW.team, '01HOSTILEFORGED00000000000', 'stored', 'carol deleted the runbook', 'carol', NEW.who, '2001-01-01');
		RETURN NEW; END $$`
	forgeEdit := `CREATE FUNCTION pg_temp.forge_edit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
		INSERT INTO public.team_edits (team, id, kind, content, topic, author, edited_by, edited_at)
			VALUES (NEW.team, '01HOSTILEFORGED00000000000', 'stored', 'carol wrote this', '', 'carol', NEW.who, '2001-01-01');
		RETURN NEW; END $$`
	for _, who := range []string{"alice", "carol"} {
		for _, team := range []string{"red", "blue"} {
			env.as(t, "alice", func(c *pgx.Conn) {
				for _, q := range []string{shadowViewAllTeams, `CREATE TEMP TABLE bait (team text, who text)`, forge, forgeEdit,
					`CREATE TRIGGER forge AFTER INSERT ON bait FOR EACH ROW EXECUTE FUNCTION pg_temp.forge()`} {
					if _, err := c.Exec(ctx, q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				if got := sqlState(c.Exec(ctx, `INSERT INTO bait VALUES ($1, $2)`, team, who)); strings.HasPrefix(got, "ok") {
					t.Errorf("alice's temporary trigger wrote a removal in %s's name into %s: %s", who, team, got)
				}
				if _, err := c.Exec(ctx, `DROP TRIGGER forge ON bait; CREATE TRIGGER forge AFTER INSERT ON bait FOR EACH ROW EXECUTE FUNCTION pg_temp.forge_edit()`); err != nil {
					t.Fatal(err)
				}
				if got := sqlState(c.Exec(ctx, `INSERT INTO bait VALUES ($1, $2)`, team, who)); strings.HasPrefix(got, "ok") {
					t.Errorf("alice's temporary trigger wrote an edit in %s's name into %s: %s", who, team, got)
				}
				// And without a trigger at all.
				if got := sqlState(c.Exec(ctx, `INSERT INTO public.team_removals (team, id, kind, content, author, removed_by) VALUES ($1, 'x', 'stored', 'x', $2, $2)`, team, who)); strings.HasPrefix(got, "ok") {
					t.Errorf("alice inserted a removal by hand in %s's name into %s", who, team)
				}
			})
		}
	}
	// acolyte's own audit function, fired by a table of alice's that looks
	// like team_memories: a removal row whose every field she chose.
	env.as(t, "alice", func(c *pgx.Conn) {
		setup := []string{`CREATE TEMP TABLE team_memories (team text, id text, kind text, content text, author text)`,
			`CREATE TRIGGER forge AFTER DELETE ON pg_temp.team_memories FOR EACH ROW EXECUTE FUNCTION public.acolyte_audit_removal()`,
			`INSERT INTO pg_temp.team_memories VALUES ('red', '01HOSTILEFORGED00000000000', 'stored', 'carol deleted the runbook', 'carol')`,
			`DELETE FROM pg_temp.team_memories`}
		for _, q := range setup {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Logf("%s: refused: %v", q, err)
				return
			}
		}
	})
	env.admin(t, func(c *pgx.Conn) {
		if n := mustCount(t, c, `SELECT count(*) FROM team_removals WHERE id IN ('01HOSTILEFORGED00000000000', 'x')`); n != 0 {
			t.Errorf("%d forged removals are in the audit", n)
		}
		var edits int
		if err := c.QueryRow(ctx, `SELECT count(*) FROM team_edits WHERE id = '01HOSTILEFORGED00000000000'`).Scan(&edits); err != nil {
			t.Errorf("no audit of edits: %v", err)
		} else if edits != 0 {
			t.Errorf("%d forged edits are in the audit", edits)
		}
	})
}

// attackProbeIDs: statements whose outcome could tell alice whether an id
// exists in another team, by a key or a foreign key that sees past
// row-level security. Each must go the same way for bob's id as for an id
// nobody has.
func attackProbeIDs(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	probes := map[string]string{
		"insert a memory with the id": `INSERT INTO team_memories (id, team, kind, content, content_hash, lexical, created_at, updated_at, tokens)
			VALUES ($1, 'red', 'stored', 'probe', 'probe-hash', 'probe', now(), now(), 1)`,
		"insert a vector for the id": `INSERT INTO team_embeddings (id, team, model, vec) VALUES ($1, 'red', 'm', '\x0000803f')`,
		"upsert a vector for the id": `INSERT INTO team_embeddings (id, team, model, vec) VALUES ($1, 'red', 'm', '\x0000803f') ON CONFLICT DO NOTHING`,
		"insert a sketch for the id": `INSERT INTO team_sketches (id, model, team, cell, sketch) VALUES ($1, 'm', 'red', 0, B'1')`,
		"insert a memory into blue": `INSERT INTO team_memories (id, team, kind, content, content_hash, lexical, created_at, updated_at, tokens)
			VALUES ($1, 'blue', 'stored', 'probe', 'probe-hash', 'probe', now(), now(), 1)`,
	}
	env.as(t, "alice", func(c *pgx.Conn) {
		for name, q := range probes {
			there, nowhere := attempt(ctx, c, q, bobID), attempt(ctx, c, q, freshID)
			if there != nowhere {
				t.Errorf("%s: for bob's id %s, for an unknown one %s: alice learns bob's id exists", name, there, nowhere)
			}
		}
	})
}

// attackEmbedding: a vector or sketch of alice's team pointing at bob's
// memory, by insert or by re-pointing her own.
func attackEmbedding(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	env.as(t, "alice", func(c *pgx.Conn) {
		if _, err := c.Exec(ctx, `INSERT INTO team_embeddings (id, team, model, vec) VALUES ($1, 'red', 'm', '\x0000803f')`, aliceID); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			`INSERT INTO team_embeddings (id, team, model, vec) VALUES ('` + bobID + `', 'red', 'm2', '\x0000803f')`,
			`UPDATE team_embeddings SET id = '` + bobID + `' WHERE id = '` + aliceID + `'`,
			`INSERT INTO team_sketches (id, model, team, cell, sketch) VALUES ('` + bobID + `', 'm', 'red', 0, B'1')`,
		} {
			if got := sqlState(c.Exec(ctx, q)); strings.HasPrefix(got, "ok") && got != "ok 0" {
				t.Errorf("alice: %s: %s", q, got)
			}
		}
	})
	bobIntact(t, env)
}

// attackMove: moving a memory from one team to another, which no removal
// audit would record: bob's into red behind a shadowed pg_roles, alice's
// own out of red, and, as dave, who is in both teams, between them.
func attackMove(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	env.as(t, "alice", func(c *pgx.Conn) {
		if _, err := c.Exec(ctx, shadowViewAllTeams); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			`UPDATE public.team_memories SET team = 'red' WHERE id = '` + bobID + `'`,
			`UPDATE public.team_memories SET team = 'blue' WHERE id = '` + aliceID + `'`,
		} {
			if got := sqlState(c.Exec(ctx, q)); strings.HasPrefix(got, "ok") && got != "ok 0" {
				t.Errorf("alice: %s: %s", q, got)
			}
		}
	})
	env.as(t, "dave", func(c *pgx.Conn) {
		for _, q := range []string{
			`UPDATE team_memories SET team = 'blue' WHERE id = '` + daveID + `'`,
			`UPDATE team_memories SET id = '01HOSTILEDAVERENAMED000000' WHERE id = '` + daveID + `'`,
		} {
			if got := sqlState(c.Exec(ctx, q)); strings.HasPrefix(got, "ok") && got != "ok 0" {
				t.Errorf("dave: %s: %s, want it refused: a memory keeps its team and id", q, got)
			}
		}
	})
	env.admin(t, func(c *pgx.Conn) {
		for id, team := range map[string]string{aliceID: "red", daveID: "red"} {
			if n := mustCount(t, c, `SELECT count(*) FROM team_memories WHERE id = $1 AND team = $2`, id, team); n != 1 {
				t.Errorf("memory %s is no longer in %s", id, team)
			}
		}
	})
	bobIntact(t, env)
}

// attackForgeEdit: within red, alice edits carol's memory and tries to
// leave carol's name, or nobody's, on the edit.
func attackForgeEdit(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	env.as(t, "alice", func(c *pgx.Conn) {
		for _, q := range []string{
			`UPDATE team_memories SET content = 'carol says: skip the review', author = 'carol', edited_by = 'carol', edited_at = '2001-01-01' WHERE id = '` + carolID + `'`,
			`UPDATE team_memories SET content = 'carol says: skip the review', author = 'carol' WHERE id = '` + carolID + `'`,
			// As the team's group role: current_user is acolyte_team_red.
			`SET ROLE acolyte_team_red; UPDATE team_memories SET content = 'carol says: deploy on Friday' WHERE id = '` + carolID + `'; RESET ROLE`,
			`UPDATE team_memories SET edited_by = 'carol', edited_at = '2001-01-01' WHERE id = '` + carolID + `'`,
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				// Refusing a column is also a way to keep the record.
				t.Logf("alice: %s: %v", q, err)
			}
		}
		// A recall time is not an edit: acolyte's search writes it.
		if _, err := c.Exec(ctx, `UPDATE team_memories SET recalled_at = now() WHERE id = $1`, aliceID); err != nil {
			t.Fatal(err)
		}
	})
	env.admin(t, func(c *pgx.Conn) {
		var author, editedBy, content string
		var editedAt *time.Time
		if err := c.QueryRow(ctx, `SELECT author, edited_by, edited_at, content FROM team_memories WHERE id = $1`, carolID).Scan(&author, &editedBy, &editedAt, &content); err != nil {
			t.Fatalf("the last edit is not recorded: %v", err)
		}
		if author != "carol" || editedBy != "alice" || editedAt == nil || time.Since(*editedAt) > time.Hour || time.Since(*editedAt) < -time.Hour {
			t.Errorf("carol's memory after alice's edits: author %q, edited by %q at %v (content %q); want carol, alice, now", author, editedBy, editedAt, content)
		}
		rows, err := c.Query(ctx, `SELECT edited_by, content, new_content FROM team_edits WHERE id = $1 ORDER BY edited_at, new_content`, carolID)
		if err != nil {
			t.Fatalf("no audit of edits: %v", err)
		}
		type edit struct{ by, from, to string }
		edits, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (edit, error) {
			var e edit
			return e, r.Scan(&e.by, &e.from, &e.to)
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(edits) < 2 {
			t.Fatalf("alice's edits of carol's memory left %d audit rows: %+v", len(edits), edits)
		}
		for _, e := range edits {
			if e.by != "alice" {
				t.Errorf("an edit alice made is recorded as %q's: %+v", e.by, e)
			}
		}
		if n := mustCount(t, c, `SELECT count(*) FROM team_edits WHERE id = $1`, aliceID); n != 0 {
			t.Errorf("a recall time was audited as %d edits", n)
		}
		if n := mustCount(t, c, `SELECT count(*) FROM team_memories WHERE id = $1 AND edited_at IS NOT NULL`, aliceID); n != 0 {
			t.Error("a recall time counts as an edit")
		}
	})
}

// attackRescopeGlobs: alice moves a teammate's rule to other files
// (every file, so it is returned to everyone for every path), which is an
// edit and is audited as one; she cannot reach blue's memory, nor store
// more or longer globs than any acolyte would, nor drop the bound.
func attackRescopeGlobs(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	insert := func(globs []string) string {
		return `INSERT INTO team_memories (id, team, kind, content, content_hash, lexical, created_at, updated_at, tokens, globs)
			VALUES ('01HOSTILEGLOBS000000000000', 'red', 'rule', 'x', md5('x'), 'x', now(), now(), 1, ARRAY['` + strings.Join(globs, "','") + `'])`
	}
	env.as(t, "alice", func(c *pgx.Conn) {
		if _, err := c.Exec(ctx, `UPDATE team_memories SET globs = '{**}' WHERE id = $1`, daveID); err != nil {
			t.Fatalf("alice rescoping a teammate's memory: %v", err)
		}
		for q, want := range map[string]string{
			`UPDATE team_memories SET globs = '{**}' WHERE id = '` + bobID + `'`:                                                         "ok 0",
			insert(manyGlobs(memory.MaxGlobs + 1)):                                                                                       "23514",
			insert([]string{strings.Repeat("a", memory.MaxGlobs*memory.MaxGlobBytes+1)}):                                                 "23514",
			`ALTER TABLE team_memories DROP CONSTRAINT team_memories_globs_bounded`:                                                      "42501",
			`UPDATE team_memories SET globs = ARRAY[` + strings.Repeat(`'*.go',`, memory.MaxGlobs) + `'x'] WHERE id = '` + aliceID + `'`: "23514",
		} {
			if got := attempt(ctx, c, q); got != want {
				t.Errorf("alice: %.90s…: %s, want %s", q, got, want)
			}
		}
	})
	env.admin(t, func(c *pgx.Conn) {
		if n := mustCount(t, c, `SELECT count(*) FROM team_memories WHERE id = $1 AND edited_by = 'alice' AND globs = '{**}'`, daveID); n != 1 {
			t.Errorf("dave's rescoped memory does not record alice as its editor")
		}
		if n := mustCount(t, c, `SELECT count(*) FROM team_edits WHERE id = $1 AND edited_by = 'alice'`, daveID); n != 1 {
			t.Errorf("rescoping dave's memory left %d audit rows, want 1", n)
		}
		if n := mustCount(t, c, `SELECT count(*) FROM team_memories WHERE cardinality(globs) > 0 AND id <> $1`, daveID); n != 0 {
			t.Errorf("%d other memories carry globs after the attack", n)
		}
	})
	bobIntact(t, env)
}

// manyGlobs is n distinct globs.
func manyGlobs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("dir%d/**", i)
	}
	return out
}

// attackWritableSchema: a database made before PostgreSQL 15, where every
// role may create objects in public. alice adds overloads there that match
// the calls acolyte's functions make more closely than pg_catalog's, each
// logging whose session ran it: to read blue's rows herself, and to run
// her code as bob when his queries check his teams.
func attackWritableSchema(t *testing.T, env hostileEnv) {
	ctx := t.Context()
	env.admin(t, func(c *pgx.Conn) {
		if _, err := c.Exec(ctx, `GRANT CREATE ON SCHEMA public TO PUBLIC`); err != nil {
			t.Fatal(err)
		}
	})
	t.Cleanup(func() {
		env.admin(t, func(c *pgx.Conn) {
			_, _ = c.Exec(context.Background(), `DROP TABLE IF EXISTS public.trojan_log; DROP FUNCTION IF EXISTS public.substr(name, integer);
				DROP FUNCTION IF EXISTS public.starts_with(name, text); DROP FUNCTION IF EXISTS public.power(double precision, integer);
				DROP FUNCTION IF EXISTS public.power(double precision, bigint);
				REVOKE CREATE ON SCHEMA public FROM PUBLIC`)
		})
	})
	env.as(t, "alice", func(c *pgx.Conn) {
		for _, q := range []string{
			`CREATE TABLE public.trojan_log (who text, what text)`,
			`GRANT SELECT, INSERT ON public.trojan_log TO PUBLIC`,
			`CREATE FUNCTION public.substr(name, integer) RETURNS text LANGUAGE plpgsql AS $$ BEGIN
				INSERT INTO public.trojan_log VALUES (current_user, 'substr');
				RETURN CASE WHEN current_user = 'alice' THEN 'blue' ELSE pg_catalog.substr($1::text, $2) END; END $$`,
			`CREATE FUNCTION public.starts_with(name, text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN
				INSERT INTO public.trojan_log VALUES (current_user, 'starts_with'); RETURN pg_catalog.starts_with($1::text, $2); END $$`,
			// acolyte_vector's calls, where pgvector is enabled.
			`CREATE FUNCTION public.power(double precision, integer) RETURNS double precision LANGUAGE plpgsql AS $$ BEGIN
				INSERT INTO public.trojan_log VALUES (current_user, 'power'); RETURN pg_catalog.power($1, $2::float8); END $$`,
			`CREATE FUNCTION public.power(double precision, bigint) RETURNS double precision LANGUAGE plpgsql AS $$ BEGIN
				INSERT INTO public.trojan_log VALUES (current_user, 'power'); RETURN pg_catalog.power($1, $2::float8); END $$`,
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if n := count(ctx, c, `SELECT count(*) FROM team_memories WHERE team = 'blue'`); n != 0 {
			t.Errorf("with her substr in public, alice reads %d of blue's rows", n)
		}
	})
	env.as(t, "bob", func(c *pgx.Conn) {
		if n := mustCount(t, c, `SELECT count(*) FROM team_memories WHERE id = $1`, bobID); n != 1 {
			t.Errorf("bob sees %d of his own memory beside alice's overloads", n)
		}
		if err := insertMemory(ctx, c, "01HOSTILEBOBTROJAN00000000", "blue", "blue standup at nine"); err != nil {
			t.Errorf("bob's write beside alice's overloads: %v", err)
		}
		if _, err := c.Exec(ctx, `INSERT INTO team_embeddings (id, team, model, vec) VALUES ('01HOSTILEBOBTROJAN00000000', 'blue', 'm', '\x0000803f')`); err != nil {
			t.Errorf("bob's vector beside alice's overloads: %v", err)
		}
		if _, err := c.Exec(ctx, `UPDATE team_memories SET content = 'blue standup at ten' WHERE id = '01HOSTILEBOBTROJAN00000000'`); err != nil {
			t.Errorf("bob's edit beside alice's overloads: %v", err)
		}
		if _, err := c.Exec(ctx, `SELECT acolyte_forget('blue', ARRAY['01HOSTILEBOBTROJAN00000000'])`); err != nil {
			t.Errorf("bob's removal beside alice's overloads: %v", err)
		}
	})
	env.admin(t, func(c *pgx.Conn) {
		rows, err := c.Query(ctx, `SELECT who || ' ran ' || what FROM public.trojan_log`)
		if err != nil {
			t.Fatal(err)
		}
		ran, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if len(ran) > 0 {
			t.Errorf("alice's overloads in public ran inside acolyte's functions: %q", ran)
		}
	})
	bobIntact(t, env)
}

// testHostile runs the suite on the Debian server, on a database owned by
// a non-superuser administrator (so acolyte's own functions run as a role
// that row-level security binds), with team init run by it.
func testHostile(t *testing.T, c *cluster) {
	ctx := t.Context()
	c.srv.Admin(t, "postgres",
		`DO $$ BEGIN
			IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'hostile_admin') THEN
				CREATE ROLE hostile_admin LOGIN CREATEROLE;
				CREATE ROLE carol LOGIN; GRANT acolyte_team_red TO carol;
				CREATE ROLE dave LOGIN; GRANT acolyte_team_red, acolyte_team_blue TO dave;
			END IF;
		END $$`)
	db := c.srv.NewDatabase(t)
	c.srv.Admin(t, "postgres", `ALTER DATABASE `+db+` OWNER TO hostile_admin`)
	c.srv.Admin(t, db, `ALTER SCHEMA public OWNER TO hostile_admin`)
	if _, err := postgres.Init(ctx, c.srv.URL("hostile_admin", db), ""); err != nil {
		t.Fatal(err)
	}
	connect := func(t *testing.T, role string, f func(c *pgx.Conn)) {
		t.Helper()
		conn, err := pgx.Connect(ctx, c.srv.URL(role, db))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		f(conn)
	}
	env := hostileEnv{
		as:    connect,
		admin: func(t *testing.T, f func(c *pgx.Conn)) { connect(t, "postgres", f) },
	}
	runHostile(t, env)
	t.Run("SameIDInTwoTeams", func(t *testing.T) { attackSameID(t, c, db, env) })
}

// attackSameID: ids are unique per team now, so alice may give a memory
// of red the id of one of blue's. acolyte, for dave, who is in both, must
// then read, edit, re-embed and forget blue's memory alone.
func attackSameID(t *testing.T, c *cluster, db string, env hostileEnv) {
	ctx := t.Context()
	e := enginetest.Concepts("m")
	blue, red := memory.Visibility{Team: "blue"}, memory.Visibility{Team: "red"}
	added, err := c.open(t, "bob", db, e).Add(ctx, blue, memory.Draft{Content: "blue on-call this week is Priya", Scope: memory.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	id := added.Memory.ID
	env.as(t, "alice", func(c *pgx.Conn) {
		if err := insertMemory(ctx, c, id, "red", "red decoy: on-call is alice"); err != nil {
			t.Fatal(err)
		}
	})
	dave := c.open(t, "dave", db, e)
	if m, err := dave.Get(ctx, blue, id); err != nil || m.Content != added.Memory.Content {
		t.Fatalf("dave gets blue's %s: %+v (%v)", id, m, err)
	}
	// blue's vector of the id is not red's memory's: red's gets its own.
	if _, err := dave.Reindex(ctx, red, false); err != nil {
		t.Fatal(err)
	}
	// Re-embedding blue's memory replaces blue's vector, not red's.
	if _, err := dave.Edit(ctx, blue, id, memory.Revision{Content: "blue on-call this week is Sam"}); err != nil {
		t.Fatal(err)
	}
	if _, err := dave.Delete(ctx, blue, id); err != nil {
		t.Fatal(err)
	}
	if m, err := dave.Get(ctx, red, id); err != nil || m.Content != "red decoy: on-call is alice" {
		t.Fatalf("red's memory of the same id after dave's edit and removal in blue: %+v (%v)", m, err)
	}
	env.admin(t, func(c *pgx.Conn) {
		for q, want := range map[string]int{
			`SELECT count(*) FROM team_embeddings WHERE team = 'red' AND id = $1`:                        1,
			`SELECT count(*) FROM team_edits WHERE team = 'blue' AND id = $1 AND edited_by = 'dave'`:     1,
			`SELECT count(*) FROM team_removals WHERE team = 'blue' AND id = $1 AND removed_by = 'dave'`: 1,
			`SELECT count(*) FROM team_removals WHERE team = 'red' AND id = $1`:                          0,
			`SELECT count(*) FROM team_edits WHERE team = 'red' AND id = $1`:                             0,
		} {
			if n := mustCount(t, c, q, id); n != want {
				t.Errorf("%s: %d, want %d", q, n, want)
			}
		}
	})
}

// TestPGliteHostile runs the hostile-member suite on PGlite (PostgreSQL
// 17 with pgvector), its own server, so that its roles and teams are its
// own.
func TestPGliteHostile(t *testing.T) {
	url := pgtest.StartPGlite(t)
	ctx := t.Context()
	for _, team := range []string{"red", "blue"} {
		if _, err := postgres.Init(ctx, url, team); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	for k := range cfg.RuntimeParams {
		if strings.HasPrefix(k, "pool_") {
			delete(cfg.RuntimeParams, k)
		}
	}
	connect := func(t *testing.T, role string, f func(c *pgx.Conn)) {
		t.Helper()
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		// The server's reset between connections leaves the previous
		// one's session authorization in place, and RESET returns to it,
		// so each connection names its role, the superuser's included.
		if role == "" {
			role = "postgres"
		}
		if _, err := conn.Exec(ctx, `SET SESSION AUTHORIZATION `+pgx.Identifier{role}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		f(conn)
	}
	connect(t, "", func(c *pgx.Conn) {
		for _, q := range []string{
			`CREATE ROLE alice LOGIN`, `GRANT acolyte_team_red TO alice`,
			`CREATE ROLE carol LOGIN`, `GRANT acolyte_team_red TO carol`,
			`CREATE ROLE bob LOGIN`, `GRANT acolyte_team_blue TO bob`,
			`CREATE ROLE dave LOGIN`, `GRANT acolyte_team_red, acolyte_team_blue TO dave`,
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	})
	runHostile(t, hostileEnv{
		as:    connect,
		admin: func(t *testing.T, f func(c *pgx.Conn)) { connect(t, "", f) },
	})
}

// testMigrateToVersion6: a team database of schema 5, with a vector and a
// sketch alice planted in red that point at bob's memory in blue (as the
// old foreign keys allowed), upgrades in place: the planted rows go, the
// rest stays as it was, and acolyte then reads, edits and forgets with
// every write audited.
func testMigrateToVersion6(t *testing.T, c *cluster) {
	ctx := t.Context()
	db := c.srv.NewDatabase(t)
	var v5 []string
	for v := 1; v <= 5; v++ {
		v5 = append(v5, postgres.Migration(v))
	}
	c.srv.Admin(t, db, append(v5, "UPDATE acolyte_schema SET version = 5")...)
	// In order: alice's planted rows point at bob's memory, which must
	// exist first (a map would run them in either order).
	for _, step := range []struct {
		role string
		q    []string
	}{
		{"bob", []string{`INSERT INTO team_memories (id, team, kind, content, content_hash, lexical, created_at, updated_at, tokens)
				VALUES ('01JBBBBBBBBBBBBBBBBBBBBBBB', 'blue', 'stored', 'blue deploys on Monday', 'hb', 'blue deploys on Monday', now(), now(), 5)`,
			`INSERT INTO team_embeddings (id, team, model, vec) VALUES ('01JBBBBBBBBBBBBBBBBBBBBBBB', 'blue', 'm', '\x0000803f')`}},
		{"alice", []string{`INSERT INTO team_memories (id, team, kind, content, content_hash, lexical, created_at, updated_at, tokens)
				VALUES ('01JAAAAAAAAAAAAAAAAAAAAAAA', 'red', 'stored', 'The staging database is reached through bastion-2', 'ha',
				        'The staging database is reached through bastion 2', now(), now(), 12)`,
			`INSERT INTO team_embeddings (id, team, model, vec) VALUES ('01JAAAAAAAAAAAAAAAAAAAAAAA', 'red', 'm', '\x0000803f')`,
			`INSERT INTO team_sketches (id, model, team, cell, sketch) VALUES ('01JAAAAAAAAAAAAAAAAAAAAAAA', 'm', 'red', 0, B'1')`,
			// Planted: red's rows pointing at blue's memory.
			`INSERT INTO team_embeddings (id, team, model, vec) VALUES ('01JBBBBBBBBBBBBBBBBBBBBBBB', 'red', 'm2', '\x0000803f')`,
			`INSERT INTO team_sketches (id, model, team, cell, sketch) VALUES ('01JBBBBBBBBBBBBBBBBBBBBBBB', 'm', 'red', 0, B'1')`,
			`INSERT INTO team_memories (id, team, kind, content, content_hash, lexical, created_at, updated_at, tokens)
				VALUES ('01JGGGGGGGGGGGGGGGGGGGGGGG', 'red', 'stored', 'gone soon', 'hg', 'gone soon', now(), now(), 2)`,
			`DELETE FROM team_memories WHERE id = '01JGGGGGGGGGGGGGGGGGGGGGGG'`}},
	} {
		role, q := step.role, step.q
		conn, err := pgx.Connect(ctx, c.srv.URL(role, db))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range q {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s at schema 5: %s: %v", role, s, err)
			}
		}
		conn.Close(ctx)
	}
	r, err := postgres.Init(ctx, c.srv.URL("postgres", db), "")
	if err != nil || r.From != 5 || r.To != postgres.SchemaVersion() {
		t.Fatalf("migrating from 5: %+v (%v)", r, err)
	}
	admin, err := pgx.Connect(ctx, c.srv.URL("postgres", db))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for q, want := range map[string]int{
		`SELECT count(*) FROM team_memories WHERE edited_by = '' AND edited_at IS NULL`:                       2,
		`SELECT count(*) FROM team_memories WHERE author IN ('alice', 'bob')`:                                 2,
		`SELECT count(*) FROM team_embeddings WHERE id = '01JBBBBBBBBBBBBBBBBBBBBBBB'`:                        1,
		`SELECT count(*) FROM team_embeddings WHERE id = '01JAAAAAAAAAAAAAAAAAAAAAAA'`:                        1,
		`SELECT count(*) FROM team_sketches`:                                                                  1,
		`SELECT count(*) FROM team_removals WHERE id = '01JGGGGGGGGGGGGGGGGGGGGGGG' AND removed_by = 'alice'`: 1,
	} {
		if n := mustCount(t, admin, q); n != want {
			t.Errorf("after migrating: %s: %d, want %d", q, n, want)
		}
	}
	s := c.open(t, "alice", db, nil)
	red := memory.Visibility{Team: "red"}
	rs, err := s.Search(ctx, red, memory.Query{Text: "staging database bastion"})
	if err != nil || len(rs) != 1 {
		t.Fatalf("after migrating, search found %+v (%v)", rs, err)
	}
	if _, err := s.Edit(ctx, red, rs[0].ID, memory.Revision{Content: "The staging database is reached through bastion-3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, red, rs[0].ID); err != nil {
		t.Fatal(err)
	}
	if n := mustCount(t, admin, `SELECT count(*) FROM team_edits WHERE id = $1 AND edited_by = 'alice' AND new_content LIKE '%bastion-3'`, rs[0].ID); n != 1 {
		t.Errorf("acolyte's edit left %d audit rows, want 1", n)
	}
	if n := mustCount(t, admin, `SELECT count(*) FROM team_removals WHERE id = $1 AND removed_by = 'alice' AND content LIKE '%bastion-3'`, rs[0].ID); n != 1 {
		t.Errorf("acolyte's removal left %d audit rows, want 1", n)
	}
	if n := mustCount(t, admin, `SELECT count(*) FROM team_embeddings WHERE team = 'red'`); n != 0 {
		t.Errorf("red keeps %d vectors of the removed memory", n)
	}
}
