package sqlite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/acolyte-dev/acolyte/memory"
)

// bulkMin is the fewest new memories an import into an empty scope writes
// in bulk (bulkAdd); fewer take upsert, whose cost is then too small to
// matter.
const bulkMin = 256

// bulkRows is how many rows one INSERT statement writes in bulk. Each
// statement pays the driver's and VDBE's fixed cost once; 64 rows of the
// widest table bind 960 parameters, far under SQLite's limit.
const bulkRows = 64

// bulkCache is the page cache, in KiB, of the transaction that writes in
// bulk. SQLite's default of 2 MiB spilled a fresh clone's 100k-memory
// import to the WAL long before commit and read the content-hash index's
// spilled pages back at random: 144k page writes and 115k reads, against
// 78k and 47k with 16 MiB and 67k and 36k (the commit and checkpoint
// alone) with 64 MiB, which cost 100 MB more of memory for little more.
const bulkCache = 16 << 10

// errNoBulkSeqs is bulkAdd declining an index whose seqs are used up.
var errNoBulkSeqs = errors.New("no seqs left to assign in order")

// prepared is what a memory's rows hold besides the memory itself, worked
// out away from the SQL connection, on every core.
type prepared struct {
	hash, paths, globs, body, forms string
	vec                             []byte
}

// bulkAdd writes ms, none of which the scope holds (a fresh clone's first
// import), to the same rows, lexical rows and vectors upsert would, in one
// transaction: plain multi-row INSERTs in the order of ms, seqs assigned
// as SQLite would assign them one by one, and each batch's lexical rows
// right after its other rows. The vectors and lexical texts are worked out
// in batches across the cores while SQLite writes the batches before them,
// so the workers' part and FTS5's overlap instead of FTS5 running alone on
// one core at the end. It returns upsert's warning when the embedder fails.
func (s *Store) bulkAdd(ctx context.Context, ms []memory.Memory) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	batches := s.prepareBatches(ctx, ms)
	defer func() {
		// Workers wait for slots the writer frees: stop them before
		// waiting, whether or not the writer took every batch.
		cancel()
		batches.wg.Wait()
	}()
	warning := ""
	err := s.inTx(ctx, func(tx *txn) error {
		restore, err := tx.largerCache()
		if err != nil {
			return err
		}
		defer restore()
		var (
			last int64
			have int
		)
		if err := tx.queryRow(`SELECT coalesce(max(seq), 0), count(*) FROM memories`).Scan(&last, &have); err != nil {
			return err
		}
		if last > math.MaxInt64-int64(len(ms)) {
			// SQLite would pick random free seqs, which upsert leaves to it.
			return errNoBulkSeqs
		}
		if have == 0 {
			// The rows written are then every memory: the catalog is built
			// as they are written, and the first search need not read them
			// back (see patchedCatalog).
			tx.built = newCatalogBuilder(modelOf(s.bulkEmbedder()))
		}
		recreate, err := tx.dropIndexFor(bulkIndex, have, len(ms))
		if err != nil {
			return err
		}
		nowMs := s.now().UnixMilli()
		for b := range batches.done {
			batch, err := batches.next(ctx, b)
			if err != nil {
				return err
			}
			lo := b * embedBatch
			if batch.embedErr != nil && warning == "" {
				warning = fmt.Sprintf("stored without a vector (%v); run `acolyte reindex` when the embedder is reachable", batch.embedErr)
			}
			if warning != "" {
				// As upsert's embed: after a failed batch, none has a vector.
				for i := range batch.rows {
					batch.rows[i].vec = nil
				}
			}
			group, first := ms[lo:lo+len(batch.rows)], last+1+int64(lo)
			if err := s.insertMemories(tx, group, batch.rows, first, nowMs); err != nil {
				return err
			}
			if err := insertLexical(tx, group, batch.rows, first); err != nil {
				return err
			}
		}
		return recreate()
	})
	return warning, err
}

// bulkIndex is the index of memories that a bulk import builds after its
// rows rather than row by row. It orders rows by content hash, which is
// random, so each INSERT of 64 rows touched 64 leaf pages all over it and
// copied each to the statement journal first; CREATE INDEX sorts the
// rows once and writes its pages in order. The other indexes take rows
// in the order a fresh file holds them (ids, seqs and one model), at
// their ends.
const bulkIndex = "memories_by_scope"

// dropIndexFor drops index name inside the transaction when the n rows
// about to be written are at least as many as the table holds, so that
// building it afresh costs no more than the rows it saves; recreate puts
// it back, from its own definition in the schema, before the transaction
// commits. A transaction that fails rolls the drop back with the rest.
func (t *txn) dropIndexFor(name string, have, n int) (recreate func() error, err error) {
	if have > n {
		return func() error { return nil }, nil
	}
	var def string
	if err := t.queryRow(`SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?`, name).Scan(&def); err != nil {
		return nil, fmt.Errorf("read index %s: %w", name, err)
	}
	// DDL takes no bound parameters; name is our own constant.
	if _, err := t.tx.ExecContext(t.stmtCtx, `DROP INDEX `+name); err != nil {
		return nil, err
	}
	return func() error {
		if _, err := t.tx.ExecContext(t.stmtCtx, def); err != nil {
			return fmt.Errorf("recreate index %s: %w", name, err)
		}
		return nil
	}, nil
}

// largerCache raises the connection's page cache to bulkCache for the
// transaction; restore puts back what it was.
func (t *txn) largerCache() (restore func(), err error) {
	var was int64
	if err := t.queryRow(`PRAGMA cache_size`).Scan(&was); err != nil {
		return nil, err
	}
	// PRAGMA takes no bound parameters; the values are our own integers.
	if _, err := t.tx.ExecContext(t.stmtCtx, fmt.Sprintf(`PRAGMA cache_size = -%d`, bulkCache)); err != nil {
		return nil, err
	}
	return func() { _, _ = t.tx.ExecContext(t.stmtCtx, fmt.Sprintf(`PRAGMA cache_size = %d`, was)) }, nil
}

// insertMemories writes the memories rows and vectors of ms, whose seqs
// start at first.
func (s *Store) insertMemories(tx *txn, ms []memory.Memory, rows []prepared, first, nowMs int64) error {
	const cols = 15
	args := make([]any, 0, bulkRows*cols)
	for lo := 0; lo < len(ms); lo += bulkRows {
		if err := tx.checkCancel(0); err != nil {
			return err
		}
		group := ms[lo:min(lo+bulkRows, len(ms))]
		args = args[:0]
		for i := range group {
			m, r, seq := &group[i], &rows[lo+i], first+int64(lo+i)
			// A zero time means now for a new memory, as upsert's coalesce.
			created := nowMs
			if !m.CreatedAt.IsZero() {
				created = m.CreatedAt.UnixMilli()
			}
			updated := created
			if !m.UpdatedAt.IsZero() {
				updated = m.UpdatedAt.UnixMilli()
			}
			m.Tokens = memory.EstimateTokens(m.Content)
			args = append(args, seq, m.ID, string(m.Scope), m.ScopeKey, string(m.Kind), m.Content, m.Topic, m.Source, r.hash,
				created, updated, m.Tokens, m.Commit, r.paths, r.globs)
			tx.touched[seq] = true
			if tx.built != nil {
				// What buildCatalog would read back: the vector is this
				// model's and of this content.
				var scale float32
				var vec []int8
				if len(r.vec) > 4 {
					scale = math.Float32frombits(binary.LittleEndian.Uint32(r.vec))
					vec = unsafe.Slice((*int8)(unsafe.Pointer(&r.vec[4])), len(r.vec)-4)
				}
				tx.built.add(seq, m.Scope, m.ScopeKey, kindCode(m.Kind), scale, vec)
			}
		}
		q := `INSERT INTO memories (seq, id, scope, scope_key, kind, content, topic, source, content_hash, created_at, updated_at, tokens, commit_hash, paths, globs) VALUES ` +
			placeholders(len(group), cols)
		if _, err := tx.exec(q, args...); err != nil {
			return fmt.Errorf("write memories %s to %s: %w", group[0].ID, group[len(group)-1].ID, err)
		}
		args = args[:0]
		n := 0
		for i := range group {
			if r := &rows[lo+i]; r.vec != nil {
				args = append(args, first+int64(lo+i), s.bulkEmbedder().Model(), len(r.vec)-4, r.hash, r.vec)
				n++
			}
		}
		if n > 0 {
			if _, err := tx.exec(`INSERT INTO embeddings (seq, model, dim, content_hash, vec) VALUES `+placeholders(n, 5), args...); err != nil {
				return err
			}
		}
	}
	return nil
}

// insertLexical writes the lexical rows of ms, whose seqs start at first,
// one per statement, as upsert does. FTS5 flushes its pending terms into a
// new segment at every statement savepoint, and every multi-row INSERT
// that names its rowids opens one (SQLite checks each named rowid is an
// integer, which may abort the statement), so these rows go after the
// other rows of their batch: the next batch's first INSERT flushes them,
// one segment of embedBatch memories each. Rows written 64 at a time cost
// as much as one at a time (measured), in more and smaller segments.
func insertLexical(tx *txn, ms []memory.Memory, rows []prepared, first int64) error {
	for i := range ms {
		if err := tx.checkCancel(i); err != nil {
			return err
		}
		if _, err := tx.exec(`INSERT INTO memories_fts (rowid, body, forms) VALUES (?, ?, ?)`, first+int64(i), rows[i].body, rows[i].forms); err != nil {
			return err
		}
	}
	return nil
}

// placeholders is n rows of cols bound parameters: (?,?),(?,?).
func placeholders(n, cols int) string {
	row := "(" + strings.Repeat("?,", cols-1) + "?)"
	return strings.Repeat(row+",", n-1) + row
}

// preparedBatch is one embedBatch of memories worked out by prepare.
type preparedBatch struct {
	rows     []prepared
	embedErr error
}

// batchPipeline hands the batches of an import to the writer in order,
// while workers, one per core, prepare the ones after.
type batchPipeline struct {
	done []chan preparedBatch // by batch number
	// slots bounds how many prepared batches wait for the writer, so that
	// workers faster than SQLite do not hold the whole import in memory.
	slots chan struct{}
	wg    sync.WaitGroup
}

// prepareBatches starts the workers that prepare ms in batches of
// embedBatch, the batch size upsert's embed uses.
func (s *Store) prepareBatches(ctx context.Context, ms []memory.Memory) *batchPipeline {
	n := (len(ms) + embedBatch - 1) / embedBatch
	workers := max(1, min(runtime.GOMAXPROCS(0), n))
	p := &batchPipeline{done: make([]chan preparedBatch, n), slots: make(chan struct{}, workers+1)}
	next := make(chan int, n)
	for b := range n {
		p.done[b] = make(chan preparedBatch, 1)
		next <- b
	}
	close(next)
	for range workers {
		p.wg.Go(func() {
			for {
				select {
				case p.slots <- struct{}{}:
				case <-ctx.Done():
					return
				}
				b, ok := <-next
				if !ok {
					<-p.slots
					return
				}
				p.done[b] <- s.prepareBatch(ctx, ms[b*embedBatch:min((b+1)*embedBatch, len(ms))])
			}
		})
	}
	return p
}

// next waits for batch b and frees its slot for the workers.
func (p *batchPipeline) next(ctx context.Context, b int) (preparedBatch, error) {
	select {
	case batch := <-p.done[b]:
		<-p.slots
		return batch, nil
	case <-ctx.Done():
		return preparedBatch{}, ctx.Err()
	}
}

// bulkEmbedder is the embedder a bulk import places memories with: a
// layered embedder's instant one, whose vectors cost microseconds, leaving
// the model's to Fill.
func (s *Store) bulkEmbedder() memory.Embedder {
	if s.instant != nil {
		s.leftPending.Store(true)
		return s.instant
	}
	return s.embedder
}

// prepareBatch works out the rows of one batch: content hashes, paths and
// globs as stored, lexical texts and quantised vectors.
func (s *Store) prepareBatch(ctx context.Context, ms []memory.Memory) preparedBatch {
	out := preparedBatch{rows: make([]prepared, len(ms))}
	for i := range ms {
		m := &ms[i]
		out.rows[i] = prepared{hash: memory.ContentHash(m.Content), paths: encodePaths(m.Paths), globs: encodePaths(m.Globs),
			body: memory.LexicalText(m), forms: memory.LexicalForms(m)}
	}
	e := s.bulkEmbedder()
	if e == nil {
		return out
	}
	texts := make([]string, len(ms))
	for i := range ms {
		texts[i] = memory.EmbedText(&ms[i])
	}
	got, err := e.Embed(ctx, memory.PurposeDocument, texts)
	if err == nil && len(got) != len(ms) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(got), len(ms))
	}
	if err != nil {
		out.embedErr = err
		return out
	}
	for i, v := range got {
		out.rows[i].vec = quantize(v)
	}
	return out
}
