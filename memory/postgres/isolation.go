package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Schema version 6: isolation that holds against a member who writes SQL
// by hand and has read this file. Up to version 5 a member could:
//
//   - shadow pg_roles with a temporary view: acolyte_my_teams() read it
//     unqualified, by the caller's search_path, where pg_temp comes first
//     unless named, so the policies took the member for a member of every
//     team (read, write and move any team's rows);
//   - write audit rows at will: the only check on an insert into
//     team_removals was pg_trigger_depth() > 0, which any trigger of the
//     member's own temporary table satisfies;
//   - probe ids, and point vectors at other teams' memories: keys and
//     foreign keys on id alone answer from every team's rows, since
//     constraint checks see past row-level security;
//   - move a memory between teams they belong to, with no removal audited;
//   - edit a teammate's memory with no record of who did.
//
// The rules that close them, which any later function must follow:
//
//   - Every function fixes search_path to pg_catalog, pg_temp and names
//     the schema of each table it touches (@schema@ below, filled in by
//     Init). PostgreSQL's advice for SECURITY DEFINER functions is a path
//     that excludes any schema an untrusted role may write: pg_temp last
//     keeps a member's temporary relations behind the catalog's (functions
//     and operators are never looked up there), and acolyte's own schema
//     stays out because PUBLIC could create objects in public before
//     PostgreSQL 15, and still can in databases made then, where an
//     overload that matches a call's argument types more closely than
//     pg_catalog's wins whatever the path's order. Catalog functions are
//     also written pg_catalog.f, for the reader.
//   - Policies need no path: PostgreSQL stores them parsed, by object id.
//   - Audit rows are written only by SECURITY DEFINER triggers, as the
//     tables' owner, which no member may execute or attach to a table of
//     their own (EXECUTE is revoked, and each checks the table it fires
//     on); members have no INSERT on the audit tables at all.
//   - Who did something is session_user, the role that logged in: a
//     member may SET ROLE to the team's group role, which would change
//     current_user, but cannot change session_user.
//   - Keys are (team, id): a member's insert can collide only with their
//     own team's rows, and a vector or sketch references a memory of its
//     own team, which the policies restrict to the writer's teams.
//   - A memory keeps its team and id; an UPDATE that changes anything but
//     its recall time records who edited it and when, on the row
//     (edited_by, edited_at) and in team_edits with the text before.
const migration6 = `-- Keys by team. Vectors and sketches of one team that point at another
	-- team's rows were planted through the old foreign keys: they go.
	ALTER TABLE @schema@.team_sketches DROP CONSTRAINT team_sketches_id_model_fkey;
	ALTER TABLE @schema@.team_embeddings DROP CONSTRAINT team_embeddings_id_fkey;
	ALTER TABLE @schema@.team_sketches DROP CONSTRAINT team_sketches_pkey;
	ALTER TABLE @schema@.team_embeddings DROP CONSTRAINT team_embeddings_pkey;
	ALTER TABLE @schema@.team_memories DROP CONSTRAINT team_memories_pkey;
	ALTER TABLE @schema@.team_memories NO FORCE ROW LEVEL SECURITY;
	ALTER TABLE @schema@.team_embeddings NO FORCE ROW LEVEL SECURITY;
	ALTER TABLE @schema@.team_sketches NO FORCE ROW LEVEL SECURITY;
	DELETE FROM @schema@.team_embeddings e WHERE NOT EXISTS
		(SELECT 1 FROM @schema@.team_memories m WHERE m.team = e.team AND m.id = e.id);
	DELETE FROM @schema@.team_sketches k WHERE NOT EXISTS
		(SELECT 1 FROM @schema@.team_embeddings e WHERE e.team = k.team AND e.id = k.id AND e.model = k.model);
	ALTER TABLE @schema@.team_memories ADD PRIMARY KEY (team, id);
	ALTER TABLE @schema@.team_embeddings ADD PRIMARY KEY (team, id, model),
		ADD FOREIGN KEY (team, id) REFERENCES @schema@.team_memories (team, id) ON DELETE CASCADE;
	ALTER TABLE @schema@.team_sketches ADD PRIMARY KEY (team, id, model),
		ADD FOREIGN KEY (team, id, model) REFERENCES @schema@.team_embeddings (team, id, model) ON DELETE CASCADE;
	ALTER TABLE @schema@.team_memories FORCE ROW LEVEL SECURITY;
	ALTER TABLE @schema@.team_embeddings FORCE ROW LEVEL SECURITY;
	ALTER TABLE @schema@.team_sketches FORCE ROW LEVEL SECURITY;

	-- The teams of the connected role, read from the catalog itself.
	CREATE OR REPLACE FUNCTION @schema@.acolyte_my_teams() RETURNS SETOF text
		LANGUAGE sql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
		AS $$ SELECT pg_catalog.substr(r.rolname::pg_catalog.text, 14) FROM pg_catalog.pg_roles r
		      WHERE pg_catalog.starts_with(r.rolname::pg_catalog.text, 'acolyte_team_')
		        AND pg_catalog.pg_has_role(CURRENT_USER, r.oid, 'MEMBER') $$;

	-- Who edited a memory last, and when (never: '' and NULL).
	ALTER TABLE @schema@.team_memories ADD COLUMN edited_by text NOT NULL DEFAULT '',
		ADD COLUMN edited_at timestamptz;

	-- The author is the inserting login; an UPDATE keeps it, and the last
	-- editor too unless team_memories_edited (below) says it is an edit.
	CREATE OR REPLACE FUNCTION @schema@.acolyte_set_author() RETURNS trigger
		LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			IF TG_OP = 'INSERT' THEN
				NEW.author := SESSION_USER;
				NEW.edited_by := '';
				NEW.edited_at := NULL;
				RETURN NEW;
			END IF;
			IF NEW.team IS DISTINCT FROM OLD.team OR NEW.id IS DISTINCT FROM OLD.id THEN
				RAISE EXCEPTION 'a team memory keeps its team and id: remember it in the other team and forget this one'
					USING ERRCODE = 'integrity_constraint_violation';
			END IF;
			NEW.author := OLD.author;
			NEW.edited_by := OLD.edited_by;
			NEW.edited_at := OLD.edited_at;
			RETURN NEW;
		END $$;

	CREATE FUNCTION @schema@.acolyte_set_editor() RETURNS trigger
		LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			NEW.edited_by := SESSION_USER;
			NEW.edited_at := pg_catalog.clock_timestamp();
			RETURN NEW;
		END $$;
	-- An edit is a change to anything but the recall time, which a search
	-- writes. (Triggers of one event fire by name: this after _author.)
	CREATE TRIGGER team_memories_edited BEFORE UPDATE ON @schema@.team_memories FOR EACH ROW
		WHEN ((NEW.kind, NEW.content, NEW.content_hash, NEW.lexical, NEW.topic, NEW.source, NEW.created_at, NEW.updated_at,
		       NEW.tokens, NEW.commit_hash, NEW.paths)
		      IS DISTINCT FROM (OLD.kind, OLD.content, OLD.content_hash, OLD.lexical, OLD.topic, OLD.source, OLD.created_at,
		       OLD.updated_at, OLD.tokens, OLD.commit_hash, OLD.paths))
		EXECUTE FUNCTION @schema@.acolyte_set_editor();

	-- Every edit: the memory before it, what it became, who and when.
	CREATE TABLE @schema@.team_edits (
		team        text NOT NULL,
		id          text NOT NULL,
		kind        text NOT NULL,
		content     text NOT NULL,
		topic       text NOT NULL,
		new_kind    text NOT NULL,
		new_content text NOT NULL,
		new_topic   text NOT NULL,
		author      text NOT NULL,
		edited_by   text NOT NULL,
		edited_at   timestamptz NOT NULL
	);
	CREATE INDEX team_edits_team ON @schema@.team_edits (team, edited_at);

	-- The audit writers. SECURITY DEFINER: they run as the tables' owner,
	-- the only role the audit tables' insert policies admit; members have
	-- no INSERT on them. Nobody else may execute them, so a member cannot
	-- attach them to a table of their own, and each refuses to fire on any
	-- table but team_memories.
	CREATE OR REPLACE FUNCTION @schema@.acolyte_audit_removal() RETURNS trigger
		LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			IF TG_RELID OPERATOR(pg_catalog.<>) '@schema@.team_memories'::pg_catalog.regclass::pg_catalog.oid THEN
				RAISE EXCEPTION 'acolyte_audit_removal audits team_memories only' USING ERRCODE = 'insufficient_privilege';
			END IF;
			INSERT INTO @schema@.team_removals (team, id, kind, content, author, removed_by, removed_at)
				VALUES (OLD.team, OLD.id, OLD.kind, OLD.content, OLD.author, SESSION_USER, pg_catalog.now());
			RETURN OLD;
		END $$;
	CREATE FUNCTION @schema@.acolyte_audit_edit() RETURNS trigger
		LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			IF TG_RELID OPERATOR(pg_catalog.<>) '@schema@.team_memories'::pg_catalog.regclass::pg_catalog.oid THEN
				RAISE EXCEPTION 'acolyte_audit_edit audits team_memories only' USING ERRCODE = 'insufficient_privilege';
			END IF;
			INSERT INTO @schema@.team_edits (team, id, kind, content, topic, new_kind, new_content, new_topic, author, edited_by, edited_at)
				VALUES (OLD.team, OLD.id, OLD.kind, OLD.content, OLD.topic, NEW.kind, NEW.content, NEW.topic, OLD.author,
				        SESSION_USER, NEW.edited_at);
			RETURN NULL;
		END $$;
	REVOKE ALL ON FUNCTION @schema@.acolyte_audit_removal(), @schema@.acolyte_audit_edit() FROM PUBLIC;
	CREATE TRIGGER team_memories_edit_audit AFTER UPDATE ON @schema@.team_memories FOR EACH ROW
		WHEN ((NEW.kind, NEW.content, NEW.content_hash, NEW.lexical, NEW.topic, NEW.source, NEW.created_at, NEW.updated_at,
		       NEW.tokens, NEW.commit_hash, NEW.paths)
		      IS DISTINCT FROM (OLD.kind, OLD.content, OLD.content_hash, OLD.lexical, OLD.topic, OLD.source, OLD.created_at,
		       OLD.updated_at, OLD.tokens, OLD.commit_hash, OLD.paths))
		EXECUTE FUNCTION @schema@.acolyte_audit_edit();

	-- The audit tables: members read their teams' rows; only the owner
	-- (the triggers above) inserts; nobody changes or removes a row.
	DROP POLICY team_members_audit ON @schema@.team_removals;
	REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON @schema@.team_removals FROM PUBLIC;
	CREATE POLICY acolyte_audit_writer ON @schema@.team_removals FOR INSERT
		WITH CHECK (CURRENT_USER OPERATOR(pg_catalog.=) (SELECT pg_catalog.pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class c
			WHERE c.oid OPERATOR(pg_catalog.=) '@schema@.team_removals'::pg_catalog.regclass::pg_catalog.oid));
	ALTER TABLE @schema@.team_edits ENABLE ROW LEVEL SECURITY;
	ALTER TABLE @schema@.team_edits FORCE ROW LEVEL SECURITY;
	CREATE POLICY team_members_read ON @schema@.team_edits FOR SELECT
		USING (team IN (SELECT @schema@.acolyte_my_teams()));
	CREATE POLICY acolyte_audit_writer ON @schema@.team_edits FOR INSERT
		WITH CHECK (CURRENT_USER OPERATOR(pg_catalog.=) (SELECT pg_catalog.pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class c
			WHERE c.oid OPERATOR(pg_catalog.=) '@schema@.team_edits'::pg_catalog.regclass::pg_catalog.oid));
	GRANT SELECT ON @schema@.team_edits TO PUBLIC;
	CREATE TRIGGER team_edits_no_change BEFORE UPDATE OR DELETE ON @schema@.team_edits
		FOR EACH ROW EXECUTE FUNCTION @schema@.acolyte_audit_append_only();
	CREATE TRIGGER team_edits_no_truncate BEFORE TRUNCATE ON @schema@.team_edits
		FOR EACH STATEMENT EXECUTE FUNCTION @schema@.acolyte_audit_append_only();

	-- The postings' trigger, with its table named instead of found through
	-- the firing table's schema (a temporary table's, for a member's own).
	CREATE OR REPLACE FUNCTION @schema@.acolyte_terms() RETURNS trigger
		LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			IF TG_OP IN ('UPDATE', 'DELETE') THEN
				DELETE FROM @schema@.team_terms x WHERE x.team OPERATOR(pg_catalog.=) OLD.team
					AND x.term OPERATOR(pg_catalog.=) ANY (pg_catalog.tsvector_to_array(OLD.fts)) AND x.id OPERATOR(pg_catalog.=) OLD.id;
			END IF;
			IF TG_OP IN ('INSERT', 'UPDATE') THEN
				INSERT INTO @schema@.team_terms (team, term, id, kind, topic)
					SELECT NEW.team, t, NEW.id, NEW.kind, NEW.topic FROM pg_catalog.unnest(pg_catalog.tsvector_to_array(NEW.fts)) t;
			END IF;
			RETURN NULL;
		END $$;`

// schemaName is what Init accepts as the schema of acolyte's tables: the
// name is written into the functions of migration 6, inside identifiers
// and string literals, so it is kept to what needs no quoting. Compiled on
// first use, since every acolyte process links this package and few talk to
// a team database.
var schemaName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`) })

// tableSchema is the schema holding acolyte's tables, found as Init's
// statements find them.
func tableSchema(ctx context.Context, tx pgx.Tx) (string, error) {
	var s *string
	if err := tx.QueryRow(ctx, `SELECT n.nspname::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = pg_catalog.to_regclass('team_memories')`).Scan(&s); err != nil {
		return "", fmt.Errorf("find the schema of team_memories: %w", err)
	}
	if s == nil {
		return "", fmt.Errorf("find the schema of team_memories: no such table on the search path")
	}
	if !schemaName().MatchString(*s) {
		return "", fmt.Errorf("acolyte's tables are in schema %q; team init supports a schema named in lowercase letters, digits and '_' only: move them (ALTER TABLE ... SET SCHEMA) or set search_path to such a schema", *s)
	}
	return *s, nil
}

// migrationSQL is migration v+1 with the schema of acolyte's tables
// written in.
func migrationSQL(v int, schema string) string {
	return strings.ReplaceAll(migrations[v], "@schema@", schema)
}
