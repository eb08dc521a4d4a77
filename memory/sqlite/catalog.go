package sqlite

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/acolyte-dev/acolyte/memory"
)

// Reading memories row by row through database/sql costs about 2µs a row,
// and SQLite's bm25() about 5µs for every memory a word matches, so a store
// of 10k memories spent tens of milliseconds per search before any
// ranking. The tables stay the truth; the catalog is a packed copy of what
// search needs about every memory (its visibility group, kind and
// the current model's vector), kept in a file beside the database and
// trusted only while its generation equals the database's, which every
// write transaction increments. Deleting the file is always safe.
//
// The file is laid out in columns at aligned offsets so that a search maps
// it and reads it where it lies: a fresh process spends about a millisecond
// less than copying 1 MB of vectors into new memory (measured at 10k
// memories). A file is replaced by rename, or patched in place only where
// no reader of it reads what it changes (patchCatalog, catalogfile.go), so
// a mapping stays valid while another process publishes a newer catalog.

const generationKey = "generation"

// currentGeneration names the database's state for the catalog: its random
// id (set when the schema was created) and its write count, so a catalog
// left beside a database that was deleted and created anew never matches
// the new one.
const currentGeneration = `(SELECT coalesce((SELECT value FROM state WHERE key = 'database_id'), '') || ':' ||
	coalesce((SELECT value FROM state WHERE key = '` + generationKey + `'), ''))`

// bumpGeneration runs inside every write transaction.
const bumpGeneration = `INSERT INTO state (key, value) VALUES ('` + generationKey + `', '1')
	ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`

// catalog describes every memory, sorted by seq.
type catalog struct {
	generation string
	model      string
	dim        int
	// Group i is scopes[i] with keys[i].
	scopes []memory.Scope
	keys   []string
	seqs   []int64
	groups []uint32
	kinds  []uint8
	// vecAt is the memory's index among the vectors, or -1 without one.
	vecAt  []int32
	scales []float32
	vecs   []int8

	// refs counts the searches using the catalog, plus one while the Store
	// keeps it for the next search; unmap runs when it reaches zero.
	refs  int
	unmap func()
}

// vector returns the quantised vector at index at among the vectors.
func (c *catalog) vector(at int32) []int8 {
	return c.vecs[int(at)*c.dim : int(at+1)*c.dim]
}

// index returns the catalog position of seq, or -1.
func (c *catalog) index(seq int64) int {
	i := sort.Search(len(c.seqs), func(i int) bool { return c.seqs[i] >= seq })
	if i < len(c.seqs) && c.seqs[i] == seq {
		return i
	}
	return -1
}

// view is the part of the catalog one search may see.
type view struct {
	c       *catalog
	visible []bool
	count   int
	// withVec lists the visible positions that have a vector, ascending.
	withVec []int32
}

// view selects the memories visible from vis that pass f. topicSeqs, when
// not nil, further limits them to memories with the filter's topic.
func (c *catalog) view(vis memory.Visibility, f memory.Filter, topicSeqs map[int64]bool) *view {
	groupOK := make([]bool, len(c.scopes))
	for g := range c.scopes {
		m := memory.Memory{Scope: c.scopes[g], ScopeKey: c.keys[g]}
		groupOK[g] = vis.CanSee(m) && (f.Scope == "" || f.Scope == m.Scope)
	}
	kind := kindCode(f.Kind)
	v := &view{c: c, visible: make([]bool, len(c.seqs)), withVec: make([]int32, 0, len(c.scales))}
	for i, seq := range c.seqs {
		if c.kinds[i] == kindGone || !groupOK[c.groups[i]] || (f.Kind != "" && c.kinds[i] != kind) || (topicSeqs != nil && !topicSeqs[seq]) {
			continue
		}
		v.visible[i] = true
		v.count++
		if c.vecAt[i] >= 0 {
			v.withVec = append(v.withVec, int32(i))
		}
	}
	return v
}

// kindGone is the kind of a row whose memory a patch in place removed:
// views leave it out, and a rewrite drops it. kindCode never returns it.
const kindGone uint8 = 0xff

func kindCode(k memory.Kind) uint8 {
	for i, known := range memory.Kinds {
		if known == k {
			return uint8(i + 1)
		}
	}
	return 0
}

func (s *Store) seqsWithTopic(ctx context.Context, topic string) (map[int64]bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq FROM memories WHERE `+topicCondition("topic"), topicArgs(topic)...)
	if err != nil {
		return nil, s.explain(err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		out[seq] = true
	}
	return out, rows.Err()
}

func (s *Store) model() string { return modelOf(s.embedder) }

func modelOf(e memory.Embedder) string {
	if e == nil {
		return ""
	}
	return e.Model()
}

// spaces are the embedders whose vectors a search may run on, best
// first: the embedder, then a layered one's instant embedder.
func (s *Store) spaces() []memory.Embedder {
	if s.instant != nil {
		return []memory.Embedder{s.embedder, s.instant}
	}
	return []memory.Embedder{s.embedder}
}

// catalogPath names the catalog file of model, and of this version of the
// file format, so that two versions of acolyte sharing a database each
// keep their own file instead of rebuilding the other's.
func (s *Store) catalogPath(model string) string {
	return s.catalogFile(model + "\x00" + catalogMagic)
}

// legacyCatalogPath is where version 3 of the file was kept, which a
// rebuild removes: 12 MB at 100k memories that nothing would read again.
func (s *Store) legacyCatalogPath(model string) string { return s.catalogFile(model) }

func (s *Store) catalogFile(key string) string {
	sum := sha256.Sum256([]byte(key))
	return s.path + "-catalog-" + hex.EncodeToString(sum[:6])
}

func (s *Store) generation(ctx context.Context) (string, error) {
	var gen string
	if err := s.db.QueryRowContext(ctx, `SELECT `+currentGeneration).Scan(&gen); err != nil {
		return "", s.explain(err)
	}
	return gen, nil
}

// savedCatalog returns the catalog of generation gen without touching the
// database: the one this Store kept from an earlier search, else the file.
// It returns nil when neither is current. The caller must release it.
func (s *Store) savedCatalog(gen, model string) *catalog {
	s.catalogMu.Lock()
	defer s.catalogMu.Unlock()
	if c := s.kept[model]; c != nil && c.generation == gen {
		c.refs++
		return c
	}
	c, err := readCatalog(s.catalogPath(model), model)
	if err != nil {
		return nil
	}
	if c.generation != gen {
		c.unmap()
		return nil
	}
	s.keepLocked(c)
	c.refs++
	return c
}

// rebuildCatalog reads the catalog from the tables and saves it for the
// next search and the next process. The caller must release it.
func (s *Store) rebuildCatalog(ctx context.Context, model string) (*catalog, error) {
	c, err := s.buildCatalog(ctx, model)
	if err != nil {
		return nil, err
	}
	// The file is only a cache; failing to save it costs the next search
	// time, not correctness. A read-only home keeps it in memory alone.
	if s.readOnly == "" {
		_ = writeCatalog(s.catalogPath(model), c)
		_ = os.Remove(s.legacyCatalogPath(model))
	}
	s.catalogMu.Lock()
	defer s.catalogMu.Unlock()
	s.keepLocked(c)
	c.refs++
	return c, nil
}

// keepLocked makes c the catalog the Store keeps of its model, dropping
// the one before.
func (s *Store) keepLocked(c *catalog) {
	c.refs++
	if old := s.kept[c.model]; old != nil {
		s.releaseLocked(old)
	}
	if s.kept == nil {
		s.kept = make(map[string]*catalog)
	}
	s.kept[c.model] = c
}

func (s *Store) releaseCatalog(c *catalog) {
	s.catalogMu.Lock()
	defer s.catalogMu.Unlock()
	s.releaseLocked(c)
}

func (s *Store) releaseLocked(c *catalog) {
	c.refs--
	if c.refs == 0 && c.unmap != nil {
		c.unmap()
	}
}

// catalogQuery selects what the catalog holds about the memories that
// where (a clause over memories m, or "") admits, with the generation the
// rows belong to. ?1 is the model whose vectors count.
func catalogQuery(where string) string {
	return `SELECT ` + currentGeneration + `, m.seq, m.scope, m.scope_key, m.kind, e.vec
		FROM memories m LEFT JOIN embeddings e ON e.seq = m.seq AND e.model = ?1 AND e.content_hash = m.content_hash
		` + where + ` ORDER BY m.seq`
}

// catalogBuilder appends memories to a catalog in seq order.
type catalogBuilder struct {
	c     *catalog
	group map[[2]string]uint32
}

func newCatalogBuilder(model string) *catalogBuilder {
	return &catalogBuilder{c: &catalog{model: model}, group: map[[2]string]uint32{}}
}

func (b *catalogBuilder) groupOf(scope memory.Scope, key string) uint32 {
	g, ok := b.group[[2]string{string(scope), key}]
	if !ok {
		g = uint32(len(b.c.scopes))
		b.group[[2]string{string(scope), key}] = g
		b.c.scopes = append(b.c.scopes, scope)
		b.c.keys = append(b.c.keys, key)
	}
	return g
}

func (b *catalogBuilder) add(seq int64, scope memory.Scope, key string, kind uint8, scale float32, vec []int8) {
	c := b.c
	g := b.groupOf(scope, key)
	at := int32(-1)
	if len(vec) > 0 && (c.dim == 0 || len(vec) == c.dim) {
		c.dim = len(vec)
		at = int32(len(c.scales))
		c.scales = append(c.scales, scale)
		c.vecs = append(c.vecs, vec...)
	}
	c.seqs = append(c.seqs, seq)
	c.groups = append(c.groups, g)
	c.kinds = append(c.kinds, kind)
	c.vecAt = append(c.vecAt, at)
}

// catalogRow is one row of catalogQuery.
type catalogRow struct {
	seq   int64
	scope memory.Scope
	key   string
	kind  uint8
	scale float32
	vec   []int8
}

// readCatalogRows calls fn for each row of a catalogQuery and returns the
// generation the rows carried ("" when there were none).
func readCatalogRows(rows *sql.Rows, fn func(catalogRow)) (string, error) {
	defer rows.Close()
	var gen string
	for rows.Next() {
		var (
			r    catalogRow
			kind memory.Kind
			blob []byte
		)
		if err := rows.Scan(&gen, &r.seq, &r.scope, &r.key, &kind, &blob); err != nil {
			return "", err
		}
		r.kind = kindCode(kind)
		if len(blob) > 4 {
			r.scale = math.Float32frombits(binary.LittleEndian.Uint32(blob))
			r.vec = unsafe.Slice((*int8)(unsafe.Pointer(&blob[4])), len(blob)-4)
		}
		fn(r)
	}
	return gen, rows.Err()
}

// buildCatalog reads everything in one statement, so the generation it
// records is the one the rows belong to.
func (s *Store) buildCatalog(ctx context.Context, model string) (*catalog, error) {
	rows, err := s.db.QueryContext(ctx, catalogQuery(""), model)
	if err != nil {
		return nil, s.explain(fmt.Errorf("load the search catalog: %w", err))
	}
	b := newCatalogBuilder(model)
	gen, err := readCatalogRows(rows, func(r catalogRow) { b.add(r.seq, r.scope, r.key, r.kind, r.scale, r.vec) })
	if err != nil {
		return nil, s.explain(fmt.Errorf("load the search catalog: %w", err))
	}
	if gen == "" {
		// With no rows the statement read no generation either.
		if gen, err = s.generation(ctx); err != nil {
			return nil, err
		}
	}
	b.c.generation = gen
	return b.c, nil
}

// Keeping the catalog current as part of each write. Rebuilding it reads
// every memory (about 70 ms at 10k), which the first search after any
// write paid, so an agent that remembers and then searches paid it every
// turn. A write transaction instead reads back only the memories it
// touched and patches the catalog of the generation it started from; it
// publishes the result once the transaction has committed. Any obstacle
// (no catalog of that generation, too many changes, a failed file write)
// only leaves the next search to rebuild, as before.

// patchLimit is the most memories one write patches into the catalog;
// reading more back costs about as much as a rebuild.
const patchLimit = 2000

// catalogPatch is what a write transaction read back about the memories
// it touched, to bring the catalog of generation before to generation gen
// once it has committed.
type catalogPatch struct {
	model, before, gen string
	touched            map[int64]bool
	// fresh holds the touched memories that still exist, by seq.
	fresh []catalogRow
	// old is the catalog of generation before, which a rewrite starts from
	// when the patch does not fit in place (patchCatalog).
	old *catalog
	// whole, when not nil, is the catalog of generation gen entire, which
	// the transaction built as it wrote (txn.built): nothing to patch.
	whole *catalog
}

// readTouched reads back, inside tx, what the catalog holds about the
// memories of touched, in seq order, and the generation they belong to.
func readTouched(tx *txn, model string, touched map[int64]bool) ([]catalogRow, string, error) {
	seqs := make([]int64, 0, len(touched))
	for seq := range touched {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	var fresh []catalogRow
	gen := ""
	for start := 0; start < len(seqs); start += 500 {
		chunk := seqs[start:min(start+500, len(seqs))]
		args := []any{model}
		for _, seq := range chunk {
			args = append(args, seq)
		}
		rows, err := tx.tx.QueryContext(tx.ctx, catalogQuery(`WHERE m.seq IN (`+strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",")+`)`), args...)
		if err != nil {
			return nil, "", err
		}
		g, err := readCatalogRows(rows, func(r catalogRow) { fresh = append(fresh, r) })
		if err != nil {
			return nil, "", err
		}
		gen = cmp.Or(g, gen)
	}
	if gen == "" {
		if err := tx.queryRow(`SELECT ` + currentGeneration).Scan(&gen); err != nil {
			return nil, "", err
		}
	}
	return fresh, gen, nil
}

// mergeCatalog returns a copy of p.old with p's memories read again.
func mergeCatalog(p *catalogPatch) *catalog {
	old, fresh := p.old, p.fresh
	b := newCatalogBuilder(old.model)
	n := len(old.seqs) + len(fresh)
	c := b.c
	c.dim = old.dim
	c.seqs, c.groups, c.kinds, c.vecAt = make([]int64, 0, n), make([]uint32, 0, n), make([]uint8, 0, n), make([]int32, 0, n)
	c.scales, c.vecs = make([]float32, 0, n), make([]int8, 0, n*old.dim)
	for g := range old.scopes {
		b.groupOf(old.scopes[g], old.keys[g]) // the same numbering as old
	}
	j := 0
	for i, seq := range old.seqs {
		for ; j < len(fresh) && fresh[j].seq < seq; j++ {
			r := fresh[j]
			b.add(r.seq, r.scope, r.key, r.kind, r.scale, r.vec)
		}
		if p.touched[seq] || old.kinds[i] == kindGone {
			continue
		}
		at := int32(-1)
		if k := old.vecAt[i]; k >= 0 {
			at = int32(len(c.scales))
			c.scales = append(c.scales, old.scales[k])
			c.vecs = append(c.vecs, old.vector(k)...)
		}
		c.seqs = append(c.seqs, seq)
		c.groups = append(c.groups, old.groups[i])
		c.kinds = append(c.kinds, old.kinds[i])
		c.vecAt = append(c.vecAt, at)
	}
	for ; j < len(fresh); j++ {
		r := fresh[j]
		b.add(r.seq, r.scope, r.key, r.kind, r.scale, r.vec)
	}
	c.generation = p.gen
	return c
}

// patchedCatalog reads back what tx touched, for publishCatalog to bring
// the catalog of generation before along; nil when there is no catalog to
// patch or patching is not worth it.
func (s *Store) patchedCatalog(tx *txn, before, model string) *catalogPatch {
	if tx.built != nil && tx.built.c.model == model {
		c := tx.built.c
		if err := tx.queryRow(`SELECT ` + currentGeneration).Scan(&c.generation); err != nil {
			return nil
		}
		return &catalogPatch{model: c.model, gen: c.generation, whole: c}
	}
	if len(tx.touched) == 0 || len(tx.touched) > patchLimit {
		return nil
	}
	fresh, gen, err := readTouched(tx, model, tx.touched)
	if err != nil {
		return nil
	}
	return &catalogPatch{model: model, before: before, gen: gen, touched: tx.touched, fresh: fresh}
}

// publishCatalog brings the saved catalog to p's generation, for the next
// search in this process and in others, once p's transaction has
// committed. The file is patched in place (patchCatalog): a user's
// remember beside 100k memories used to copy and rewrite a 12 MB file, and
// so did a checkout's hook changing one memory, for 58% of its time. A
// patch the file has no room for writes a patched copy.
func (s *Store) publishCatalog(p *catalogPatch) {
	if p.whole != nil {
		// Only a cache: a failed write leaves the next process to rebuild.
		_ = writeCatalog(s.catalogPath(p.model), p.whole)
		s.catalogMu.Lock()
		defer s.catalogMu.Unlock()
		s.keepLocked(p.whole)
		return
	}
	if patchCatalog(s.catalogPath(p.model), p) == nil {
		// The next search maps the file, which now holds the patch.
		s.catalogMu.Lock()
		defer s.catalogMu.Unlock()
		if c := s.kept[p.model]; c != nil {
			s.releaseLocked(c)
			delete(s.kept, p.model)
		}
		return
	}
	if p.old = s.savedCatalog(p.before, p.model); p.old == nil {
		return
	}
	defer s.releaseCatalog(p.old)
	c := mergeCatalog(p)
	// Only a cache: a failed write leaves the next search to rebuild.
	_ = writeCatalog(s.catalogPath(c.model), c)
	s.catalogMu.Lock()
	defer s.catalogMu.Unlock()
	s.keepLocked(c)
}

// staleTempAge is how old a catalog temporary file must be before the next
// writer removes it. A catalog is written in well under a second, so one an
// hour old was left by a process killed mid-write; at 100k memories each is
// 12 MB, too much to leave lying in the data directory.
const staleTempAge = time.Hour

// removeLegacyTemps deletes the temporary files, older than age, that a
// catalog write of acolyte before internal/atomicfile named PATH.tmp-*:
// they are 12 MB at 100k memories, and nothing else would ever remove one
// a killed writer left.
func removeLegacyTemps(path string, age time.Duration) {
	temps, _ := filepath.Glob(path + ".tmp-*")
	for _, t := range temps {
		if info, err := os.Lstat(t); err == nil && info.Mode().IsRegular() && time.Since(info.ModTime()) >= age {
			_ = os.Remove(t)
		}
	}
}
