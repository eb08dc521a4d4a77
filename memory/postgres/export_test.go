package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/acolyte-dev/acolyte/memory"
)

// SetTextSearchConfig makes s parse queries with cfg, for the test that
// compares configurations after re-generating the index column with it.
func SetTextSearchConfig(s *Store, cfg string) { s.tsConfig = cfg }

// Migration returns the SQL that takes the schema from version v-1 to v,
// for the test that migrates a database made by an older acolyte.
func Migration(v int) string { return migrations[v-1] }

// SetScanOnly makes every search of s read the whole team, for the tests
// that compare the paths.
func SetScanOnly(s *Store, on bool) { s.scanOnly = on }

// Scans is how many searches of s have read the whole team (searchScan).
func Scans(s *Store) int64 { return s.scans.Load() }

// Lexical and EncodeVector are the stored forms of a memory's words and
// vector, for the benchmark that loads a team with COPY.
func Lexical(m *memory.Memory) string { return lexical(m) }
func EncodeVector(v []float32) []byte { return encodeVector(v) }

// CutCells cuts the vector cells of a team loaded with COPY, which a
// member's writes would have cut as the team grew.
func CutCells(ctx context.Context, s *Store, team, model string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := cutCells(ctx, tx, team, model, 1)
		return err
	})
}

// SetWholeTeam sets how many memories a team may have for a search of s
// to read it whole, and for its writes to cut no cells, so that tests and
// measurements take the path of a large team on a small one.
func SetWholeTeam(s *Store, n int) { s.whole = n }

// DecodeVector reads a stored vector.
func DecodeVector(b []byte) []float32 { return decodeVector(b) }

// UsesHNSW says whether a search of s by model's vectors of size dim
// takes its candidates from pgvector's HNSW index.
func UsesHNSW(s *Store, model string, dim int) bool { return s.hnsw[hnswIndex(model, dim)] }

// HNSWQuery is the query a search sends for a model's nearest vectors.
func HNSWQuery(model string, dim int) string { return hnswSQL(model, dim, "") }

// HNSWKindQuery is that query for a search filtered by the kind $4.
func HNSWKindQuery(model string, dim int) string {
	return hnswSQL(model, dim, filterByID(memory.Filter{Kind: memory.KindRule}, "team_embeddings.id", 4))
}

// ForgetCells empties s's cache of centroids, as a new process starts.
func ForgetCells(s *Store) { s.cells = &cellCache{} }

// SchemaLock is the advisory lock key team init took to serialise itself.
const SchemaLock = schemaLock
