package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/acolyte-dev/acolyte/memory"
)

// textSearchConfig is the full-text configuration of the lexical index.
// 'english' stems with Snowball, as the local store's FTS5 index stems with
// Porter, so a word finds the same memories on both engines; see
// CONTRIBUTING.md for how it was chosen.
const textSearchConfig = "english"

// migrations are the schema versions in order: migrations[i] takes a
// database from version i to i+1. A released migration never changes;
// a new schema is a new entry.
var migrations = []string{
	// 1: memories, their vectors by model, and row-level security by team.
	`CREATE TABLE acolyte_schema (version integer NOT NULL);
	INSERT INTO acolyte_schema VALUES (0);
	GRANT SELECT ON acolyte_schema TO PUBLIC;

	CREATE TABLE team_memories (
		id           text PRIMARY KEY,
		team         text NOT NULL,
		kind         text NOT NULL,
		content      text NOT NULL,
		content_hash text NOT NULL,
		lexical      text NOT NULL,
		topic        text NOT NULL DEFAULT '',
		source       text NOT NULL DEFAULT '',
		created_at   timestamptz NOT NULL,
		updated_at   timestamptz NOT NULL,
		tokens       integer NOT NULL,
		commit_hash  text NOT NULL DEFAULT '',
		paths        text[] NOT NULL DEFAULT '{}',
		fts          tsvector GENERATED ALWAYS AS (to_tsvector('` + textSearchConfig + `', lexical)) STORED,
		UNIQUE (team, content_hash)
	);
	CREATE INDEX team_memories_fts ON team_memories USING gin (fts);
	CREATE INDEX team_memories_listing ON team_memories (team, created_at, id);

	CREATE TABLE team_embeddings (
		id    text NOT NULL REFERENCES team_memories (id) ON DELETE CASCADE,
		team  text NOT NULL,
		model text NOT NULL,
		-- float32 little-endian: a search reads every vector of the team,
		-- and bytea costs the server and pgx a copy where real[] costs a
		-- header and a conversion per element (measured: BenchmarkTeamSearch).
		vec   bytea NOT NULL CHECK (length(vec) % 4 = 0),
		PRIMARY KEY (id, model)
	);
	CREATE INDEX team_embeddings_model ON team_embeddings (team, model);

	-- The teams the connected role may see: those whose group role
	-- (acolyte_team_NAME) it is a member of. Row-level security rests on
	-- it, so isolation holds for any client, not only acolyte.
	CREATE FUNCTION acolyte_my_teams() RETURNS SETOF text
		LANGUAGE sql STABLE SECURITY INVOKER
		AS $$ SELECT substr(rolname, 14) FROM pg_roles
		      WHERE rolname LIKE 'acolyte\_team\_%' AND pg_has_role(current_user, oid, 'MEMBER') $$;

	ALTER TABLE team_memories ENABLE ROW LEVEL SECURITY;
	ALTER TABLE team_memories FORCE ROW LEVEL SECURITY;
	CREATE POLICY team_members ON team_memories
		USING (team IN (SELECT acolyte_my_teams()))
		WITH CHECK (team IN (SELECT acolyte_my_teams()));
	ALTER TABLE team_embeddings ENABLE ROW LEVEL SECURITY;
	ALTER TABLE team_embeddings FORCE ROW LEVEL SECURITY;
	CREATE POLICY team_members ON team_embeddings
		USING (team IN (SELECT acolyte_my_teams()))
		WITH CHECK (team IN (SELECT acolyte_my_teams()));
	GRANT SELECT, INSERT, UPDATE, DELETE ON team_memories, team_embeddings TO PUBLIC;`,
	// 2: when a search last returned each memory (NULL: never), as the
	// local store records it, so a team memory nobody recalls shows it.
	`ALTER TABLE team_memories ADD COLUMN recalled_at timestamptz;`,
	// 3: who wrote each memory and who removed which. Both are the
	// database's record, not the client's claim: triggers write them from
	// current_user, and a member may neither disable a trigger (only the
	// tables' owner may) nor write the audit table except through one.
	migration3,
	// 4: indexes a search reads under row-level security, so a search
	// at 100k memories reads candidates, not the whole team (index.go).
	migration4,
	// 5: each posting carries its memory's kind and topic, so a filtered
	// search reads no memory row per posting (index.go).
	migration5,
	// 6: isolation that holds against a hostile member: fixed search
	// paths, audit rows written only by acolyte's triggers, keys by team,
	// and edits audited (isolation.go).
	migration6,
	// 7: the files each memory applies to, bounded, its changes audited
	// as edits (globs.go).
	migration7,
	// 8: members may lock nothing another team needs: no DELETE and no
	// table-level UPDATE, removals through SECURITY DEFINER functions
	// (teamlock.go).
	migration8,
}

// migration3 adds the author of each team memory and the audit table of
// removals. Rows written before it have an empty author: who wrote them
// was never recorded.
const migration3 = `ALTER TABLE team_memories ADD COLUMN author text NOT NULL DEFAULT '';
	ALTER TABLE team_memories ALTER COLUMN author SET DEFAULT current_user;

	-- The author is the inserting role, whatever the INSERT names, and an
	-- UPDATE keeps it: a hand-written statement cannot put a memory in
	-- another member's name. SECURITY INVOKER, so current_user is the
	-- member's own role.
	CREATE FUNCTION acolyte_set_author() RETURNS trigger
		LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			IF TG_OP = 'INSERT' THEN
				NEW.author := current_user;
			ELSE
				NEW.author := OLD.author;
			END IF;
			RETURN NEW;
		END $$;
	CREATE TRIGGER team_memories_author BEFORE INSERT OR UPDATE ON team_memories
		FOR EACH ROW EXECUTE FUNCTION acolyte_set_author();

	-- Every removal of a team memory, written by the trigger below in the
	-- remover's own transaction: the audit row and the removal commit or
	-- roll back together.
	CREATE TABLE team_removals (
		team       text NOT NULL,
		id         text NOT NULL,
		kind       text NOT NULL,
		content    text NOT NULL,
		author     text NOT NULL,
		removed_by text NOT NULL DEFAULT current_user,
		removed_at timestamptz NOT NULL DEFAULT now()
	);
	CREATE INDEX team_removals_team ON team_removals (team, removed_at);
	ALTER TABLE team_removals ENABLE ROW LEVEL SECURITY;
	ALTER TABLE team_removals FORCE ROW LEVEL SECURITY;
	CREATE POLICY team_members_read ON team_removals FOR SELECT
		USING (team IN (SELECT acolyte_my_teams()));
	-- Only a trigger may insert (pg_trigger_depth() > 0), only in the
	-- remover's name and teams. A member could still write a trigger of
	-- their own on a temporary table to add rows, but only rows saying
	-- they removed something from their own team: nothing they can hide
	-- or pin on someone else.
	CREATE POLICY team_members_audit ON team_removals FOR INSERT
		WITH CHECK (pg_trigger_depth() > 0 AND removed_by = current_user AND team IN (SELECT acolyte_my_teams()));
	GRANT SELECT, INSERT ON team_removals TO PUBLIC;

	-- The table is qualified with the schema of the table the trigger is
	-- on, so a temporary table of the same name cannot capture the row.
	CREATE FUNCTION acolyte_audit_removal() RETURNS trigger
		LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			EXECUTE format('INSERT INTO %I.team_removals (team, id, kind, content, author, removed_by, removed_at)
				VALUES ($1, $2, $3, $4, $5, current_user, now())', TG_TABLE_SCHEMA)
				USING OLD.team, OLD.id, OLD.kind, OLD.content, OLD.author;
			RETURN OLD;
		END $$;
	CREATE TRIGGER team_memories_audit AFTER DELETE ON team_memories
		FOR EACH ROW EXECUTE FUNCTION acolyte_audit_removal();

	-- The audit is append-only, for its owner too: no grant allows UPDATE
	-- or DELETE, and these triggers refuse them (and TRUNCATE) to anyone
	-- who has not first dropped them, which only the owner may.
	CREATE FUNCTION acolyte_audit_append_only() RETURNS trigger
		LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			RAISE EXCEPTION 'team_removals is append-only: the audit of removed team memories cannot be changed'
				USING ERRCODE = 'insufficient_privilege';
		END $$;
	CREATE TRIGGER team_removals_no_change BEFORE UPDATE OR DELETE ON team_removals
		FOR EACH ROW EXECUTE FUNCTION acolyte_audit_append_only();
	CREATE TRIGGER team_removals_no_truncate BEFORE TRUNCATE ON team_removals
		FOR EACH STATEMENT EXECUTE FUNCTION acolyte_audit_append_only();`

// SchemaVersion is the schema this acolyte reads and writes.
func SchemaVersion() int { return len(migrations) }

// InitReport says what Init did.
type InitReport struct {
	// From and To are the schema versions before and after.
	From, To int
	// TeamRole is the group role created for the team ("" when no team
	// was named or it already existed).
	TeamRole string
	// Vector says whether the server offers the pgvector extension.
	Vector bool
	// VectorEnabled says whether init enabled it, with its objects and an
	// HNSW index per model present (pgvector.go): false when the role may
	// not create the extension.
	VectorEnabled bool
}

// teamName is what a team may be called: it becomes part of a role name
// (63 bytes at most in PostgreSQL) and of error messages. Compiled on first
// use, like schemaName.
var teamName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`) })

// CheckTeam validates a team name.
func CheckTeam(name string) error {
	if !teamName().MatchString(name) {
		return fmt.Errorf("team name %q is not valid: use 1 to 40 lowercase letters, digits, '-' or '_', starting with a letter or digit", name)
	}
	return nil
}

// TeamRole is the group role whose members see a team's memories.
func TeamRole(team string) string { return "acolyte_team_" + team }

// schemaLock serialises concurrent inits of a database that has no schema
// yet (lockSchema).
const schemaLock = 0x61636f6c797465 // "acolyte"

// Init creates or migrates the team schema in the database at url, and
// creates the group role of team when it is named and missing. It refuses
// a schema newer than this acolyte's.
func Init(ctx context.Context, url, team string) (InitReport, error) {
	var r InitReport
	if team != "" {
		if err := CheckTeam(team); err != nil {
			return r, err
		}
	}
	conn, err := connect(ctx, url)
	if err != nil {
		return r, err
	}
	defer conn.Close(ctx)
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := lockSchema(ctx, tx); err != nil {
			return err
		}
		from, err := version(ctx, tx)
		if err != nil {
			return err
		}
		r.From, r.To = from, from
		if from > len(migrations) {
			return tooNew(from)
		}
		for v := from; v < len(migrations); v++ {
			if err := migrate(ctx, tx, v); err != nil {
				return fmt.Errorf("migrate the team schema to version %d: %w", v+1, err)
			}
			if _, err := tx.Exec(ctx, `UPDATE acolyte_schema SET version = $1`, v+1); err != nil {
				return err
			}
			r.To = v + 1
		}
		// After the last migration, whose keys the sketches are written by.
		if from < cellsVersion && r.To >= cellsVersion {
			if err := cutCellsAsOwner(ctx, tx); err != nil {
				return err
			}
		}
		if team != "" {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, TeamRole(team)).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				if _, err := tx.Exec(ctx, `CREATE ROLE `+pgx.Identifier{TeamRole(team)}.Sanitize()+` NOLOGIN`); err != nil {
					return fmt.Errorf("create the team's role %s (this needs CREATEROLE; run team init as the database owner): %w", TeamRole(team), err)
				}
				r.TeamRole = TeamRole(team)
			}
		}
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`).Scan(&r.Vector); err != nil {
			return err
		}
		r.VectorEnabled, err = enableVector(ctx, tx)
		return err
	})
	if err != nil {
		var tn *tooNewError
		if errors.As(err, &tn) {
			return r, err
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "55P03" {
			return r, fmt.Errorf("team init: %w (waited its lock timeout, %s unless the URL sets lock_timeout, for a lock another session holds on acolyte's tables, and changed nothing; "+
				"find it with `SELECT pid, usename, state, xact_start FROM pg_stat_activity WHERE pid IN (SELECT pid FROM pg_locks WHERE relation::regclass::text LIKE 'team_%%' OR relation = 'acolyte_schema'::regclass)`, "+
				"end it with `SELECT pg_terminate_backend(pid)`, and run team init again)", err, initLockTimeout)
		}
		return r, fmt.Errorf("team init: %w", err)
	}
	return r, nil
}

// initLockTimeout bounds each lock Init waits for, unless the URL sets
// lock_timeout: a member's transaction left open on a table a migration
// alters would otherwise hold init forever, and every query queued behind
// init's own waiting lock with it.
const initLockTimeout = "5s"

// lockSchema serialises concurrent inits of one database. Where the schema
// exists it locks acolyte_schema in a mode that conflicts with itself and
// that members, who may only read that table, cannot take; an advisory lock,
// which any role may take and hold, serves only a database without one
// (and a role that may not lock the table, which cannot migrate it either).
func lockSchema(ctx context.Context, tx pgx.Tx) error {
	var set string
	if err := tx.QueryRow(ctx, `SELECT pg_catalog.current_setting('lock_timeout')`).Scan(&set); err != nil {
		return err
	}
	if set == "0" {
		if _, err := tx.Exec(ctx, `SELECT pg_catalog.set_config('lock_timeout', $1, true)`, initLockTimeout); err != nil {
			return err
		}
	}
	var exists, may bool
	if err := tx.QueryRow(ctx, `SELECT pg_catalog.to_regclass('acolyte_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return err
	}
	if exists {
		if err := tx.QueryRow(ctx, `SELECT pg_catalog.has_table_privilege('acolyte_schema', 'UPDATE')`).Scan(&may); err != nil {
			return err
		}
	}
	if !may {
		if _, err := tx.Exec(ctx, `SELECT pg_catalog.pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		// Another init may have made the schema while this one waited.
		if err := tx.QueryRow(ctx, `SELECT CASE WHEN pg_catalog.to_regclass('acolyte_schema') IS NULL THEN false
			ELSE pg_catalog.has_table_privilege('acolyte_schema', 'UPDATE') END`).Scan(&may); err != nil {
			return err
		}
	}
	if may {
		_, err := tx.Exec(ctx, `LOCK TABLE acolyte_schema IN SHARE ROW EXCLUSIVE MODE`)
		return err
	}
	return nil
}

// migrate runs migrations[v]. From version 6 on a migration names the
// schema of every object it touches and runs with search_path pg_catalog,
// pg_temp alone, so that nothing a member created in a schema on the
// administrator's path (an operator overload in public, say) is bound into
// a trigger or policy it creates; the earlier ones, unqualified, keep the
// administrator's path.
func migrate(ctx context.Context, tx pgx.Tx, v int) error {
	if v < 5 {
		_, err := tx.Exec(ctx, migrations[v])
		return err
	}
	schema, err := tableSchema(ctx, tx)
	if err != nil {
		return err
	}
	var path string
	if err := tx.QueryRow(ctx, `SELECT pg_catalog.current_setting('search_path')`).Scan(&path); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true)`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, migrationSQL(v, schema)); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `SELECT pg_catalog.set_config('search_path', $1, true)`, path)
	return err
}

type tooNewError struct{ version int }

func (e *tooNewError) Error() string {
	return fmt.Sprintf("%v: the team database has schema version %d and this acolyte knows up to %d; upgrade acolyte", memory.ErrSchemaTooNew, e.version, len(migrations))
}

func (e *tooNewError) Unwrap() error { return memory.ErrSchemaTooNew }

func tooNew(v int) error { return &tooNewError{v} }

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// version reads the schema version, 0 for a database without one.
func version(ctx context.Context, q querier) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('acolyte_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v int
	err := q.QueryRow(ctx, `SELECT version FROM acolyte_schema`).Scan(&v)
	return v, err
}
