package postgres

import (
	"context"
	"crypto/md5"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// pgvector: when the server offers the extension, team init enables it
// and adds, beside the float32 bytes every engine path reads:
//
//   - team_embeddings.v, the vector as pgvector's type, set from vec by a
//     trigger (acolyte_vector decodes the float32s in SQL), so every
//     writer, acolyte or not, keeps it, and filled for the rows there;
//   - per model and size present, an HNSW index on cosine distance over
//     that model's rows (a partial index on v cast to its size: one column
//     holds vectors of every model).
//
// A search of a team larger than wholeTeam then takes its vector
// candidates from the index of its model (ORDER BY v <=> q LIMIT, with
// hnsw.iterative_scan so rows of other teams, which row-level security
// filters after the index, do not leave it short). A model first written
// after team init has no index until the next team init, and uses the
// cells (cells.go) meanwhile. Without the extension (stock PostgreSQL,
// or a role that may not create it) none of this exists: the cells serve.

// vectorSchema is written with the schemas of acolyte's tables (@schema@)
// and of the extension (@vector@), and its functions fix search_path as
// migration 6's do (isolation.go): acolyte_vector runs in every writer's
// session, so an overload of power or get_byte that a member created in a
// writable schema must never be what it calls.
const vectorSchema = `ALTER TABLE @schema@.team_embeddings ADD COLUMN IF NOT EXISTS v @vector@.vector;

	-- The float32 little-endian bytes of vec as a vector: each float's
	-- sign, exponent and mantissa taken apart, exactly (the float8 they
	-- make is a float32's value, so the cast to float4 keeps it), and the
	-- array cast to a vector. Building the vector's text instead, as this
	-- did before, crashed PGlite's WebAssembly build on vectors of 200
	-- dimensions or more.
	CREATE OR REPLACE FUNCTION @schema@.acolyte_vector(b bytea) RETURNS @vector@.vector
		LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
		AS $$ SELECT pg_catalog.array_agg(
			((CASE WHEN e = 0 THEN m * pg_catalog.power(2::float8, -149) ELSE (m + 8388608) * pg_catalog.power(2::float8, e - 150) END)
			 * (1 - 2 * s))::float4 ORDER BY i)::@vector@.vector
		      FROM (SELECT i, (x >> 31) & 1 AS s, (x >> 23) & 255 AS e, x & 8388607 AS m
		            -- (PostgreSQL gives | and << one precedence, left to right.)
		            FROM (SELECT i, pg_catalog.get_byte(b, 4*i)::bigint | (pg_catalog.get_byte(b, 4*i + 1)::bigint << 8)
		                          | (pg_catalog.get_byte(b, 4*i + 2)::bigint << 16) | (pg_catalog.get_byte(b, 4*i + 3)::bigint << 24) AS x
		                  FROM pg_catalog.generate_series(0, pg_catalog.length(b)/4 - 1) i) w) f $$;

	CREATE OR REPLACE FUNCTION @schema@.acolyte_set_vector() RETURNS trigger
		LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, pg_temp
		AS $$ BEGIN
			NEW.v := @schema@.acolyte_vector(NEW.vec);
			RETURN NEW;
		END $$;
	DROP TRIGGER IF EXISTS team_embeddings_vector ON @schema@.team_embeddings;
	CREATE TRIGGER team_embeddings_vector BEFORE INSERT OR UPDATE OF vec ON @schema@.team_embeddings
		FOR EACH ROW EXECUTE FUNCTION @schema@.acolyte_set_vector();`

// hnswIndex is the name of the HNSW index of a model's vectors of a size.
func hnswIndex(model string, dim int) string {
	sum := md5.Sum([]byte(model))
	return fmt.Sprintf("team_hnsw_%x_%d", sum[:6], dim)
}

// quoteLiteral quotes s as an SQL string literal (standard_conforming_strings
// is on by default since PostgreSQL 9.1). The model is written into the
// query, not passed, so the planner can match the partial index.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// enableVector enables pgvector in Init's transaction when the server
// has it and the role may create it, adds its objects (idempotent, so a
// later init on a server that gained pgvector adds them) and builds an
// HNSW index for every model and size present. It reports whether the
// extension is enabled.
func enableVector(ctx context.Context, tx pgx.Tx) (bool, error) {
	var available bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`).Scan(&available); err != nil || !available {
		return false, err
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, err
	}
	if _, err := sp.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
		// Not allowed to: search keeps to the stock path.
		return false, sp.Rollback(ctx)
	}
	if err := sp.Commit(ctx); err != nil {
		return false, err
	}
	schema, err := tableSchema(ctx, tx)
	if err != nil {
		return false, err
	}
	var ext string
	if err := tx.QueryRow(ctx, `SELECT n.nspname::text FROM pg_catalog.pg_extension x JOIN pg_catalog.pg_namespace n ON n.oid = x.extnamespace
		WHERE x.extname = 'vector'`).Scan(&ext); err != nil {
		return false, fmt.Errorf("find the schema of the vector extension: %w", err)
	}
	if !schemaName().MatchString(ext) {
		return false, fmt.Errorf("the vector extension is in schema %q; team init supports a schema named in lowercase letters, digits and '_' only", ext)
	}
	if _, err := tx.Exec(ctx, strings.NewReplacer("@schema@", schema, "@vector@", ext).Replace(vectorSchema)); err != nil {
		return false, fmt.Errorf("add the pgvector objects: %w", err)
	}
	// Every team's rows: the owner is exempt from row-level security only
	// while it is not forced.
	for _, q := range []string{
		`ALTER TABLE team_embeddings NO FORCE ROW LEVEL SECURITY`,
		`UPDATE team_embeddings SET v = acolyte_vector(vec) WHERE v IS NULL`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return false, fmt.Errorf("fill the pgvector column: %w", err)
		}
	}
	rows, err := tx.Query(ctx, `SELECT DISTINCT model, length(vec) / 4 FROM team_embeddings`)
	if err != nil {
		return false, err
	}
	type modelDim struct {
		model string
		dim   int
	}
	pairs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (modelDim, error) {
		var p modelDim
		err := r.Scan(&p.model, &p.dim)
		return p, err
	})
	if err != nil {
		return false, err
	}
	for _, p := range pairs {
		if p.dim < 1 || p.dim > 2000 { // HNSW indexes vectors of up to 2,000 dimensions
			continue
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON team_embeddings USING hnsw ((v::vector(%d)) vector_cosine_ops)
			WHERE model = %s AND vector_dims(v) = %d`, hnswIndex(p.model, p.dim), p.dim, quoteLiteral(p.model), p.dim)); err != nil {
			return false, fmt.Errorf("build the HNSW index of model %s: %w", p.model, err)
		}
	}
	if _, err := tx.Exec(ctx, `ALTER TABLE team_embeddings FORCE ROW LEVEL SECURITY`); err != nil {
		return false, err
	}
	return true, nil
}

// hnswIndexes returns the HNSW indexes of the database, by name.
func hnswIndexes(ctx context.Context, q pgxQuerier) (map[string]bool, error) {
	rows, err := q.Query(ctx, `SELECT indexname FROM pg_indexes WHERE tablename = 'team_embeddings' AND indexname LIKE 'team\_hnsw\_%'`)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out, err
}

type pgxQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// vectorText is v in pgvector's text form.
func vectorText(v []float32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%g", x)
	}
	b.WriteByte(']')
	return b.String()
}

// hnswSQL is the query of a team's ($1) vectors of model nearest $2, at
// most $3, that the model's HNSW index answers: its expression and its
// partial index's predicate, with the model written in. filter, when not
// "", is a kind/topic condition on the row's memory (filterByID): the
// iterative scan filters the index's rows by it, as it
// does the rows of other teams, until it has $3.
func hnswSQL(model string, dim int, filter string) string {
	return fmt.Sprintf(`SELECT id, vec FROM team_embeddings WHERE model = %s AND vector_dims(v) = %d AND team = $1%s
		ORDER BY v::vector(%d) <=> $2::vector(%d) LIMIT $3`, quoteLiteral(model), dim, filter, dim, dim)
}
