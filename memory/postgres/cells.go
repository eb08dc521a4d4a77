package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The stock PostgreSQL path to the vectors nearest a query, for a team
// too large to read whole (more than wholeTeam memories) on a server
// without pgvector. It is an inverted file, as pgvector's IVFFlat:
//
//   - once a team has cellsFrom vectors of a model, the writer that finds
//     no centroids for them learns cellCount centroids by spherical
//     k-means from up to cellTrain of the team's vectors (the first by
//     sample hash, so an even sample) and stores them (team_centroids);
//     they stay fixed, so every vector's cell stays right;
//   - every vector then gets a row in team_sketches: its nearest centroid
//     (its cell) and its sign bits about the centroids' mean (centring
//     matters: the static embedder's raw components are mostly of one
//     sign, so raw sign bits told neighbours apart badly);
//   - a search reads the cellProbes cells nearest the query, ranks their
//     rows by Hamming distance to the query's sketch in the database, and
//     re-scores the nearest sketchCandidates by their true vectors here.
//
// A full scan of the sketches cost 50 to 130 ms at 100k memories on the
// test machine (any per-row work over 100k rows under row-level security
// does), so a search reads cellProbes/cellCount of them instead. What the
// cells cost in recall is measured (CONTRIBUTING.md).
const (
	cellsFrom    = wholeTeam
	cellCount    = 128
	cellTrain    = 4096
	cellProbes   = 6
	kmeansRounds = 10
)

// cells are the centroids of one team's vectors of one model.
type cells struct {
	centroids [][]float32
	mean      []float32
}

func decodeCells(dim int, raw []byte) (*cells, error) {
	all := decodeVector(raw)
	if dim <= 0 || len(all) == 0 || len(all)%dim != 0 {
		return nil, fmt.Errorf("team_centroids holds %d bytes for vectors of size %d", len(raw), dim)
	}
	c := &cells{mean: make([]float32, dim)}
	for i := 0; i < len(all); i += dim {
		v := all[i : i+dim : i+dim]
		c.centroids = append(c.centroids, v)
		for j, x := range v {
			c.mean[j] += x / float32(len(all)/dim)
		}
	}
	return c, nil
}

// nearest returns the n cells whose centroids lie nearest v, nearest first.
func (c *cells) nearest(v []float32, n int) []int32 {
	order := make([]int32, len(c.centroids))
	cos := make([]float32, len(c.centroids))
	for i, ctr := range c.centroids {
		order[i], cos[i] = int32(i), dot(v, ctr)
	}
	slices.SortFunc(order, func(a, b int32) int {
		switch {
		case cos[a] > cos[b]:
			return -1
		case cos[a] < cos[b]:
			return 1
		}
		return int(a - b)
	})
	return order[:min(n, len(order))]
}

// sketch is v's sign bits about the centroids' mean, as a bit string.
func (c *cells) sketch(v []float32) string {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = '0'
		if x < c.mean[i] {
			b[i] = '1'
		}
	}
	return string(b)
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range min(len(a), len(b)) {
		s += a[i] * b[i]
	}
	return s
}

// kmeans learns k unit centroids from unit vectors vs (spherical k-means,
// seeded by the first k, which come in sample-hash order: at random).
func kmeans(vs [][]float32, k int) [][]float32 {
	k = min(k, len(vs))
	ctrs := make([][]float32, k)
	for i := range ctrs {
		ctrs[i] = slices.Clone(vs[i])
	}
	dim := len(vs[0])
	assign := make([]int, len(vs))
	for range kmeansRounds {
		for i, v := range vs {
			best, bestCos := 0, float32(math.Inf(-1))
			for j, c := range ctrs {
				if d := dot(v, c); d > bestCos {
					best, bestCos = j, d
				}
			}
			assign[i] = best
		}
		sums := make([][]float32, k)
		for j := range sums {
			sums[j] = make([]float32, dim)
		}
		for i, v := range vs {
			for d, x := range v {
				sums[assign[i]][d] += x
			}
		}
		for j, s := range sums {
			var norm float64
			for _, x := range s {
				norm += float64(x) * float64(x)
			}
			if norm == 0 {
				continue // an empty cell keeps its centroid
			}
			for d := range s {
				s[d] = float32(float64(s[d]) / math.Sqrt(norm))
			}
			ctrs[j] = s
		}
	}
	return ctrs
}

// dbtx is a connection or transaction.
type dbtx interface {
	querier
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// cellCache holds the centroids a Store has read, by team and model: they
// never change once stored.
type cellCache struct {
	mu sync.Mutex
	m  map[[2]string]*cells
}

func (cc *cellCache) get(team, model string) *cells {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.m[[2]string{team, model}]
}

func (cc *cellCache) put(team, model string, c *cells) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.m == nil {
		cc.m = map[[2]string]*cells{}
	}
	cc.m[[2]string{team, model}] = c
}

// readCells returns the stored centroids of team's vectors of model, nil
// when there are none yet.
func readCells(ctx context.Context, q querier, team, model string) (*cells, error) {
	var (
		dim int
		raw []byte
	)
	err := q.QueryRow(ctx, `SELECT dim, centroids FROM team_centroids WHERE team = $1 AND model = $2`, team, model).Scan(&dim, &raw)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeCells(dim, raw)
}

// sketchVectors gives the vectors of ids (of team, model) their rows in
// team_sketches, first cutting the team's cells when it has grown to
// cellsFrom vectors and has none. A team with fewer needs no cells: a
// search reads it whole.
func (s *Store) sketchVectors(ctx context.Context, tx dbtx, team, model string, ids []string, vecs [][]float32) error {
	c := s.cells.get(team, model)
	if c == nil {
		var err error
		if c, err = readCells(ctx, tx, team, model); err != nil {
			return err
		}
		if c != nil {
			s.cells.put(team, model, c)
		}
	}
	if c == nil {
		built, err := cutCells(ctx, tx, team, model, s.whole)
		if err != nil || built == nil {
			return err
		}
		c = built // cached once committed, by the next readCells
	}
	return writeSketches(ctx, tx, c, team, model, ids, vecs)
}

// cutCells learns and stores the centroids of team's vectors of model if
// it has cellsFrom of them, and sketches them all; nil when it has fewer.
// Two writers may race: the first to insert wins, the other uses its
// centroids.
func cutCells(ctx context.Context, tx dbtx, team, model string, from int) (*cells, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM team_embeddings WHERE team = $1 AND model = $2 LIMIT $3) x`,
		team, model, from).Scan(&n); err != nil || n < from {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT e.vec FROM team_embeddings e JOIN team_memories m ON m.team = e.team AND m.id = e.id
		WHERE e.team = $1 AND e.model = $2 ORDER BY m.sample LIMIT $3`, team, model, cellTrain)
	if err != nil {
		return nil, err
	}
	train, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]float32, error) {
		var raw []byte
		err := r.Scan(&raw)
		return decodeVector(raw), err
	})
	if err != nil {
		return nil, err
	}
	dim := len(train[0])
	train = slices.DeleteFunc(train, func(v []float32) bool { return len(v) != dim })
	var flat []float32
	// At least 8 vectors a cell to learn from: the cells cut at cellsFrom
	// vectors are coarser than cellCount.
	for _, c := range kmeans(train, max(1, min(cellCount, len(train)/8))) {
		flat = append(flat, c...)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO team_centroids (team, model, dim, centroids) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		team, model, dim, encodeVector(flat)); err != nil {
		return nil, err
	}
	c, err := readCells(ctx, tx, team, model)
	if err != nil || c == nil {
		return nil, err
	}
	return c, sketchMissing(ctx, tx, c, team, model)
}

// sketchMissing sketches team's vectors of model that have no sketch:
// all of them when the cells were just cut, and any that a writer racing
// the cutting wrote without one (Reindex repairs those).
func sketchMissing(ctx context.Context, tx dbtx, c *cells, team, model string) error {
	rows, err := tx.Query(ctx, `SELECT e.id, e.vec FROM team_embeddings e WHERE e.team = $1 AND e.model = $2
		AND NOT EXISTS (SELECT 1 FROM team_sketches k WHERE k.team = e.team AND k.id = e.id AND k.model = e.model)`, team, model)
	if err != nil {
		return err
	}
	var (
		ids  []string
		vecs [][]float32
	)
	for rows.Next() {
		var (
			id  string
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return err
		}
		ids, vecs = append(ids, id), append(vecs, decodeVector(raw))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return writeSketches(ctx, tx, c, team, model, ids, vecs)
}

// repairSketches gives every vector of team's model its sketch, cutting
// the cells if the team has grown to need them: Reindex's last step.
func (s *Store) repairSketches(ctx context.Context, tx dbtx, team, model string) error {
	c, err := readCells(ctx, tx, team, model)
	if err != nil {
		return err
	}
	if c == nil {
		_, err := cutCells(ctx, tx, team, model, s.whole)
		return err
	}
	return sketchMissing(ctx, tx, c, team, model)
}

// writeSketches stores the cell and sketch of each vector of the
// centroids' size (a vector of another size has no cell, and no search
// of that model compares it).
func writeSketches(ctx context.Context, tx dbtx, c *cells, team, model string, ids []string, vecs [][]float32) error {
	var (
		keep     []string
		cellsOf  []int32
		sketches []string
	)
	for i, v := range vecs {
		if len(v) != len(c.mean) {
			continue
		}
		keep = append(keep, ids[i])
		cellsOf = append(cellsOf, c.nearest(v, 1)[0])
		sketches = append(sketches, c.sketch(v))
	}
	if len(keep) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO team_sketches (id, model, team, cell, sketch)
		SELECT u.id, $2, $1, u.cell, u.sketch::varbit FROM unnest($3::text[], $4::int[], $5::text[]) u(id, cell, sketch)
		WHERE EXISTS (SELECT 1 FROM team_embeddings e WHERE e.team = $1 AND e.id = u.id AND e.model = $2) -- not removed meanwhile
		ON CONFLICT (team, id, model) DO UPDATE SET cell = EXCLUDED.cell, sketch = EXCLUDED.sketch`,
		team, model, keep, cellsOf, sketches)
	return err
}

// cellsVersion is the schema version that brought the cells.
const cellsVersion = 4

// cutCellsAsOwner is cutAllCells over every team's rows: the owner running
// the migration is exempt from row-level security only while it is not
// forced.
func cutCellsAsOwner(ctx context.Context, tx pgx.Tx) error {
	tables := []string{"team_memories", "team_embeddings", "team_centroids", "team_sketches"}
	for _, t := range tables {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+t+` NO FORCE ROW LEVEL SECURITY`); err != nil {
			return err
		}
	}
	if err := cutAllCells(ctx, tx); err != nil {
		return err
	}
	for _, t := range tables {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+t+` FORCE ROW LEVEL SECURITY`); err != nil {
			return err
		}
	}
	return nil
}

// cutAllCells cuts the cells of every team and model that has grown to
// cellsFrom vectors without them: Init's backfill when it migrates to
// schema 4, run as the tables' owner with row-level security not forced.
func cutAllCells(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT team, model FROM team_embeddings GROUP BY team, model HAVING count(*) >= $1`, cellsFrom)
	if err != nil {
		return err
	}
	pairs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var p [2]string
		err := r.Scan(&p[0], &p[1])
		return p, err
	})
	if err != nil {
		return err
	}
	for _, p := range pairs {
		if _, err := cutCells(ctx, tx, p[0], p[1], cellsFrom); err != nil {
			return fmt.Errorf("cut the vector cells of team %s, model %s: %w", p[0], p[1], err)
		}
	}
	return nil
}
