package postgres

// The search indexes of schema version 4. Row-level security keeps the
// planner off the GIN index of team_memories.fts: the policy's qual must
// run before any user qual that is not leakproof, and @@ (ts_match_vq) is
// not, so a lookup by word read every row of the table. Equality and
// range comparisons of text are leakproof (pg_proc.proleakproof), so the
// search reads:
//
//   - team_terms: one row per (team, lexeme, memory), the postings of
//     fts, kept by a trigger; a word is `term = $w`, a prefix a range
//     `term >= $p AND term < $p || U+10FFFF` (COLLATE "C": bytewise).
//   - team_centroids and team_sketches: the stock PostgreSQL path to the
//     vectors nearest a query (cells.go): the team's vectors cut into
//     cells around centroids, each with its sign bits, so a search reads
//     the few cells nearest the query and ranks them by Hamming distance
//     (bit_count(sketch # $q)) in the database.
//   - team_memories.sample: a fixed hash of the id, indexed with the
//     team, so an even sample of the team (the crowd a z-score is measured
//     against, and its size and word counts estimated) is an index range.
//
// Triggers keep them, so any client writing the tables keeps them right,
// and the migration fills them for the rows already there.

const migration4 = `CREATE TABLE team_terms (
		team text NOT NULL,
		term text COLLATE "C" NOT NULL,
		id   text NOT NULL,
		PRIMARY KEY (team, term, id)
	);

	-- The postings follow fts: the old lexemes go, the new ones come. The
	-- table is qualified with the trigger's schema so that a temporary
	-- table of the same name cannot capture the rows (as in migration 3).
	CREATE FUNCTION acolyte_terms() RETURNS trigger
		LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			IF TG_OP IN ('UPDATE', 'DELETE') THEN
				EXECUTE format('DELETE FROM %I.team_terms WHERE team = $1 AND term = ANY ($2) AND id = $3', TG_TABLE_SCHEMA)
					USING OLD.team, tsvector_to_array(OLD.fts), OLD.id;
			END IF;
			IF TG_OP IN ('INSERT', 'UPDATE') THEN
				EXECUTE format('INSERT INTO %I.team_terms (team, term, id) SELECT $1, t, $2 FROM unnest($3) t', TG_TABLE_SCHEMA)
					USING NEW.team, NEW.id, tsvector_to_array(NEW.fts);
			END IF;
			RETURN NULL;
		END $$;
	CREATE TRIGGER team_memories_terms AFTER INSERT OR DELETE OR UPDATE OF lexical, team ON team_memories
		FOR EACH ROW EXECUTE FUNCTION acolyte_terms();

	-- The stock PostgreSQL path to a query's nearest vectors (cells.go):
	-- per team and model, centroids that cut the vectors into cells, and
	-- per vector its cell and its sign bits about the centroids' mean.
	-- The client computes both, so the table has no trigger.
	CREATE TABLE team_centroids (
		team      text NOT NULL,
		model     text NOT NULL,
		dim       integer NOT NULL,
		centroids bytea NOT NULL, -- float32 little-endian, dim per centroid
		PRIMARY KEY (team, model)
	);
	CREATE TABLE team_sketches (
		id     text NOT NULL,
		model  text NOT NULL,
		team   text NOT NULL,
		cell   integer NOT NULL,
		sketch bit varying NOT NULL,
		PRIMARY KEY (id, model),
		FOREIGN KEY (id, model) REFERENCES team_embeddings (id, model) ON DELETE CASCADE
	);
	CREATE INDEX team_sketches_cell ON team_sketches (team, model, cell);

	ALTER TABLE team_memories ADD COLUMN sample integer GENERATED ALWAYS AS (hashtext(id)) STORED;
	CREATE INDEX team_memories_sample ON team_memories (team, sample);

	ALTER TABLE team_terms ENABLE ROW LEVEL SECURITY;
	ALTER TABLE team_terms FORCE ROW LEVEL SECURITY;
	CREATE POLICY team_members ON team_terms
		USING (team IN (SELECT acolyte_my_teams()))
		WITH CHECK (team IN (SELECT acolyte_my_teams()));
	ALTER TABLE team_sketches ENABLE ROW LEVEL SECURITY;
	ALTER TABLE team_sketches FORCE ROW LEVEL SECURITY;
	CREATE POLICY team_members ON team_sketches
		USING (team IN (SELECT acolyte_my_teams()))
		WITH CHECK (team IN (SELECT acolyte_my_teams()));
	ALTER TABLE team_centroids ENABLE ROW LEVEL SECURITY;
	ALTER TABLE team_centroids FORCE ROW LEVEL SECURITY;
	CREATE POLICY team_members ON team_centroids
		USING (team IN (SELECT acolyte_my_teams()))
		WITH CHECK (team IN (SELECT acolyte_my_teams()));
	GRANT SELECT, INSERT, UPDATE, DELETE ON team_terms, team_sketches, team_centroids TO PUBLIC;

	-- The postings of the rows already there, every team's: the owner
	-- running the migration is exempt from row-level security only while
	-- it is not forced. (Cells are computed by Init, in Go: cells.go.)
	ALTER TABLE team_memories NO FORCE ROW LEVEL SECURITY;
	ALTER TABLE team_terms NO FORCE ROW LEVEL SECURITY;
	INSERT INTO team_terms (team, term, id)
		SELECT DISTINCT team, t, id FROM team_memories, unnest(tsvector_to_array(fts)) t;
	ALTER TABLE team_memories FORCE ROW LEVEL SECURITY;
	ALTER TABLE team_terms FORCE ROW LEVEL SECURITY;`

// migration5 copies each memory's kind and topic into its postings. A
// search filtered by kind or topic read, for every posting it passed, the
// memory's row to test the filter (a lookup under row-level security): at
// 100k memories that made a search of the rules four times slower than
// an unfiltered one. The trigger now writes them, and rewrites a memory's
// postings when its kind or topic changes as when its words do.
const migration5 = `ALTER TABLE team_terms ADD COLUMN kind text NOT NULL DEFAULT '',
		ADD COLUMN topic text NOT NULL DEFAULT '';

	CREATE OR REPLACE FUNCTION acolyte_terms() RETURNS trigger
		LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			IF TG_OP IN ('UPDATE', 'DELETE') THEN
				EXECUTE format('DELETE FROM %I.team_terms WHERE team = $1 AND term = ANY ($2) AND id = $3', TG_TABLE_SCHEMA)
					USING OLD.team, tsvector_to_array(OLD.fts), OLD.id;
			END IF;
			IF TG_OP IN ('INSERT', 'UPDATE') THEN
				EXECUTE format('INSERT INTO %I.team_terms (team, term, id, kind, topic) SELECT $1, t, $2, $4, $5 FROM unnest($3) t', TG_TABLE_SCHEMA)
					USING NEW.team, NEW.id, tsvector_to_array(NEW.fts), NEW.kind, NEW.topic;
			END IF;
			RETURN NULL;
		END $$;
	DROP TRIGGER team_memories_terms ON team_memories;
	CREATE TRIGGER team_memories_terms AFTER INSERT OR DELETE OR UPDATE OF lexical, team, kind, topic ON team_memories
		FOR EACH ROW EXECUTE FUNCTION acolyte_terms();

	-- The postings already there, every team's (as in migration 4).
	ALTER TABLE team_memories NO FORCE ROW LEVEL SECURITY;
	ALTER TABLE team_terms NO FORCE ROW LEVEL SECURITY;
	UPDATE team_terms x SET kind = m.kind, topic = m.topic FROM team_memories m WHERE m.id = x.id;
	ALTER TABLE team_memories FORCE ROW LEVEL SECURITY;
	ALTER TABLE team_terms FORCE ROW LEVEL SECURITY;`
