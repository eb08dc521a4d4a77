package postgres

// Schema version 8: no member can stop another team (issue 35, item 3).
//
// Every team shares acolyte's tables; row-level security separates their
// rows, not their locks. Up to version 7 every member held UPDATE and
// DELETE on the shared tables, and PostgreSQL lets a role with either
// take any LOCK TABLE mode: `LOCK TABLE team_memories IN ACCESS EXCLUSIVE
// MODE` in a transaction left open stopped every team's search and
// remember (SHARE and stronger modes stopped their writes) until an
// administrator ended the session. A member's own settings are theirs,
// so no server-side timeout ends such a transaction.
//
// PostgreSQL checks LOCK TABLE against the table's own privileges, never
// its columns' (LockTableAclCheck: ACCESS SHARE needs SELECT, ROW
// EXCLUSIVE INSERT, UPDATE, DELETE or TRUNCATE, every other mode UPDATE,
// DELETE or TRUNCATE). So members now hold, on the shared tables:
//
//   - SELECT and INSERT, which allow ACCESS SHARE and ROW EXCLUSIVE: the
//     modes every reader and writer takes anyway, which conflict only
//     with SHARE and stronger, taken by no member and by the
//     administrator's team init alone;
//   - UPDATE of the columns acolyte (or a member by hand) changes, never
//     of the table: an UPDATE, and SELECT ... FOR UPDATE or FOR SHARE,
//     lock rows, and row-level security shows a member only their own
//     teams' rows, whose keys all begin with the team;
//   - no DELETE: a removal goes through acolyte_forget and
//     acolyte_forget_vectors, SECURITY DEFINER functions owned by the
//     tables' owner, and the postings' trigger (which deletes a memory's
//     old postings) is SECURITY DEFINER too.
//
// Taking DELETE away instead of everything but SELECT keeps what members
// could already do row by row (the hostile-member suite relies on it, and
// so do inserts by hand) while closing every table lock above ROW
// EXCLUSIVE; an all-functions design would close nothing more.
//
// A SECURITY DEFINER function runs as the owner, whom the forced
// row-level security binds too: acolyte_my_teams, which every policy
// reads, answers for the login (SESSION_USER, which acolyte's audit
// already records as who did what) while the current role is the
// tables' owner, so each of these functions sees and changes only the
// rows of its caller's teams; for anyone else it answers, as before,
// for the current role. Each function also checks itself that the caller
// is a member of the team it names, and touches that team's rows alone:
// the owner is often a superuser (team init run as postgres), whom
// row-level security never binds. A team the caller is not in has, for
// them, no rows, as a DELETE under row-level security found none, so
// acolyte reports the ids as not found. Each fixes its search_path as
// migration 6's rules require (isolation.go).
//
// Init no longer serialises itself with an advisory lock, which any role
// may take and hold: on a database with a schema it locks acolyte_schema,
// on which members may take ACCESS SHARE alone.
const migration8 = `CREATE OR REPLACE FUNCTION @schema@.acolyte_my_teams() RETURNS SETOF text
		LANGUAGE sql STABLE SECURITY INVOKER SET search_path = pg_catalog, pg_temp
		AS $$ SELECT pg_catalog.substr(r.rolname::pg_catalog.text, 14) FROM pg_catalog.pg_roles r
		      WHERE pg_catalog.starts_with(r.rolname::pg_catalog.text, 'acolyte_team_')
		        AND pg_catalog.pg_has_role(
		              CASE WHEN CURRENT_USER OPERATOR(pg_catalog.=) (SELECT pg_catalog.pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class c
		                     WHERE c.oid OPERATOR(pg_catalog.=) '@schema@.team_memories'::pg_catalog.regclass::pg_catalog.oid)
		                   THEN SESSION_USER ELSE CURRENT_USER END,
		              r.oid, 'MEMBER') $$;

	REVOKE UPDATE, DELETE, TRUNCATE ON @schema@.team_memories, @schema@.team_embeddings, @schema@.team_terms,
		@schema@.team_sketches, @schema@.team_centroids FROM PUBLIC;
	-- Never team or id: a memory keeps both (the author trigger refuses a
	-- change anyway), and a vector or sketch its key.
	GRANT UPDATE (kind, content, content_hash, lexical, topic, source, created_at, updated_at, tokens, commit_hash, paths,
		recalled_at, author, edited_by, edited_at, globs) ON @schema@.team_memories TO PUBLIC;
	GRANT UPDATE (vec) ON @schema@.team_embeddings TO PUBLIC;
	GRANT UPDATE (cell, sketch) ON @schema@.team_sketches TO PUBLIC;

	-- The postings follow a memory as before, now as the owner: members
	-- may no longer delete postings themselves. Nobody else may execute
	-- it, so no member attaches it to a table of their own.
	CREATE OR REPLACE FUNCTION @schema@.acolyte_terms() RETURNS trigger
		LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			IF TG_RELID OPERATOR(pg_catalog.<>) '@schema@.team_memories'::pg_catalog.regclass::pg_catalog.oid THEN
				RAISE EXCEPTION 'acolyte_terms indexes team_memories only' USING ERRCODE = 'insufficient_privilege';
			END IF;
			IF TG_OP IN ('UPDATE', 'DELETE') THEN
				DELETE FROM @schema@.team_terms x WHERE x.team OPERATOR(pg_catalog.=) OLD.team
					AND x.term OPERATOR(pg_catalog.=) ANY (pg_catalog.tsvector_to_array(OLD.fts)) AND x.id OPERATOR(pg_catalog.=) OLD.id;
			END IF;
			IF TG_OP IN ('INSERT', 'UPDATE') THEN
				INSERT INTO @schema@.team_terms (team, term, id, kind, topic)
					SELECT NEW.team, t, NEW.id, NEW.kind, NEW.topic FROM pg_catalog.unnest(pg_catalog.tsvector_to_array(NEW.fts)) t;
			END IF;
			RETURN NULL;
		END $$;
	REVOKE ALL ON FUNCTION @schema@.acolyte_terms() FROM PUBLIC;

	-- A removal of the caller's team's memories, by id; the rows removed
	-- are returned, and audited by the removal trigger in the caller's
	-- name (SESSION_USER). Another team's: none.
	CREATE FUNCTION @schema@.acolyte_forget(p_team text, p_ids text[]) RETURNS SETOF @schema@.team_memories
		LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
		AS $$ DECLARE
			m @schema@.team_memories%ROWTYPE;
		BEGIN
			IF p_team IS NULL OR NOT (p_team OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT @schema@.acolyte_my_teams()))) THEN
				RETURN;
			END IF;
			FOR m IN DELETE FROM @schema@.team_memories x WHERE x.team OPERATOR(pg_catalog.=) p_team
					AND x.id OPERATOR(pg_catalog.=) ANY (p_ids) RETURNING x.* LOOP
				RETURN NEXT m;
			END LOOP;
		END $$;

	-- The vectors of one of the caller's team's memories, every model's,
	-- before it is embedded again; their sketches go with them.
	CREATE FUNCTION @schema@.acolyte_forget_vectors(p_team text, p_id text) RETURNS bigint
		LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
		AS $$ DECLARE
			n bigint;
		BEGIN
			IF p_team IS NULL OR NOT (p_team OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT @schema@.acolyte_my_teams()))) THEN
				RETURN 0;
			END IF;
			DELETE FROM @schema@.team_embeddings x WHERE x.team OPERATOR(pg_catalog.=) p_team AND x.id OPERATOR(pg_catalog.=) p_id;
			GET DIAGNOSTICS n = ROW_COUNT;
			RETURN n;
		END $$;`
