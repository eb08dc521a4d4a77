package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"unsafe"
)

// Reading memories row by row through database/sql costs about 2µs a row,
// and SQLite's bm25() about 5µs for every memory a word matches, so a store
// of 10k memories spent tens of milliseconds per search before any
// ranking. The tables stay the truth; the catalog is a packed copy of what
// search needs about every memory (its visibility group, kind and
// the current model's vector), kept in a file beside the database and
// trusted only while its generation equals the database's, which every
// write transaction increments. Deleting the file is always safe.

const (
	generationKey = "generation"
	catalogMagic  = "acolyte-catalog/1\n"
)

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
	scopes []Scope
	keys   []string
	seqs   []int64
	groups []uint32
	kinds  []uint8
	// vecAt is the memory's index among the vectors, or -1 without one.
	vecAt  []int32
	scales []float32
	vecs   []int8
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
}

// view selects the memories visible from vis that pass f. topicSeqs, when
// not nil, further limits them to memories with the filter's topic.
func (c *catalog) view(vis Visibility, f Filter, topicSeqs map[int64]bool) *view {
	groupOK := make([]bool, len(c.scopes))
	for g := range c.scopes {
		m := Memory{Scope: c.scopes[g], ScopeKey: c.keys[g]}
		groupOK[g] = vis.CanSee(m) && (f.Scope == "" || f.Scope == m.Scope)
	}
	kind := kindCode(f.Kind)
	v := &view{c: c, visible: make([]bool, len(c.seqs))}
	for i, seq := range c.seqs {
		if !groupOK[c.groups[i]] || (f.Kind != "" && c.kinds[i] != kind) || (topicSeqs != nil && !topicSeqs[seq]) {
			continue
		}
		v.visible[i] = true
		v.count++
	}
	return v
}

// vectors returns the visible memories that have a vector of the model.
func (v *view) vectors() []storedVector {
	c := v.c
	out := make([]storedVector, 0, v.count)
	for i, at := range c.vecAt {
		if at < 0 || !v.visible[i] {
			continue
		}
		out = append(out, storedVector{seq: c.seqs[i], scale: c.scales[at], q: c.vecs[int(at)*c.dim : int(at+1)*c.dim]})
	}
	return out
}

func kindCode(k Kind) uint8 {
	for i, known := range Kinds {
		if known == k {
			return uint8(i + 1)
		}
	}
	return 0
}

func (s *Store) seqsWithTopic(ctx context.Context, topic string) (map[int64]bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq FROM memories WHERE topic = ?`, topic)
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

func (s *Store) model() string {
	if s.embedder == nil {
		return ""
	}
	return s.embedder.Model()
}

func (s *Store) catalogPath(model string) string {
	sum := sha256.Sum256([]byte(model))
	return s.path + "-catalog-" + hex.EncodeToString(sum[:6])
}

// catalog returns the current catalog, from its file when that is current,
// else rebuilt from the tables.
func (s *Store) catalog(ctx context.Context) (*catalog, error) {
	var gen string
	if err := s.db.QueryRowContext(ctx, `SELECT `+currentGeneration).Scan(&gen); err != nil {
		return nil, s.explain(err)
	}
	model := s.model()
	path := s.catalogPath(model)
	if b, err := os.ReadFile(path); err == nil {
		if c, err := decodeCatalog(b, model); err == nil && c.generation == gen {
			return c, nil
		}
	}
	c, err := s.buildCatalog(ctx, model)
	if err != nil {
		return nil, err
	}
	// The file is only a cache; failing to save it costs the next search time, not correctness.
	_ = writeCatalog(path, c)
	return c, nil
}

// buildCatalog reads everything in one statement, so the generation it
// records is the one the rows belong to.
func (s *Store) buildCatalog(ctx context.Context, model string) (*catalog, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+currentGeneration+`,
		m.seq, m.scope, m.scope_key, m.kind, e.vec
		FROM memories m LEFT JOIN embeddings e ON e.seq = m.seq AND e.model = ? AND e.content_hash = m.content_hash
		ORDER BY m.seq`, model)
	if err != nil {
		return nil, s.explain(fmt.Errorf("load the search catalog: %w", err))
	}
	defer rows.Close()
	c := &catalog{model: model}
	group := map[[2]string]uint32{}
	read := false
	for rows.Next() {
		var (
			seq   int64
			scope Scope
			key   string
			kind  Kind
			blob  []byte
		)
		if err := rows.Scan(&c.generation, &seq, &scope, &key, &kind, &blob); err != nil {
			return nil, err
		}
		read = true
		g, ok := group[[2]string{string(scope), key}]
		if !ok {
			g = uint32(len(c.scopes))
			group[[2]string{string(scope), key}] = g
			c.scopes = append(c.scopes, scope)
			c.keys = append(c.keys, key)
		}
		at := int32(-1)
		if len(blob) > 4 && (c.dim == 0 || len(blob)-4 == c.dim) {
			c.dim = len(blob) - 4
			at = int32(len(c.scales))
			c.scales = append(c.scales, math.Float32frombits(binary.LittleEndian.Uint32(blob)))
			for _, b := range blob[4:] {
				c.vecs = append(c.vecs, int8(b))
			}
		}
		c.seqs = append(c.seqs, seq)
		c.groups = append(c.groups, g)
		c.kinds = append(c.kinds, kindCode(kind))
		c.vecAt = append(c.vecAt, at)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !read {
		// With no rows the statement read no generation either.
		if err := s.db.QueryRowContext(ctx, `SELECT `+currentGeneration).Scan(&c.generation); err != nil {
			return nil, s.explain(err)
		}
	}
	return c, nil
}

// The file: magic, model, generation, dim, groups, memory records, then
// the scales and vectors.
func writeCatalog(path string, c *catalog) error {
	var b bytes.Buffer
	b.WriteString(catalogMagic)
	putString(&b, c.model)
	putString(&b, c.generation)
	putUint(&b, uint64(c.dim))
	putUint(&b, uint64(len(c.scopes)))
	for i := range c.scopes {
		putString(&b, string(c.scopes[i]))
		putString(&b, c.keys[i])
	}
	putUint(&b, uint64(len(c.seqs)))
	putUint(&b, uint64(len(c.scales)))
	var rec [recordSize]byte
	for i := range c.seqs {
		binary.LittleEndian.PutUint64(rec[0:], uint64(c.seqs[i]))
		binary.LittleEndian.PutUint32(rec[8:], c.groups[i])
		binary.LittleEndian.PutUint32(rec[12:], uint32(c.vecAt[i]))
		rec[16] = c.kinds[i]
		b.Write(rec[:])
	}
	for _, sc := range c.scales {
		binary.Write(&b, binary.LittleEndian, math.Float32bits(sc))
	}
	if len(c.vecs) > 0 {
		b.Write(unsafe.Slice((*byte)(unsafe.Pointer(&c.vecs[0])), len(c.vecs)))
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

const recordSize = 8 + 4 + 4 + 1

func putString(b *bytes.Buffer, s string) {
	putUint(b, uint64(len(s)))
	b.WriteString(s)
}

func putUint(b *bytes.Buffer, v uint64) {
	b.Write(binary.AppendUvarint(nil, v))
}

var errBadCatalog = errors.New("search catalog is unreadable")

func decodeCatalog(b []byte, model string) (*catalog, error) {
	if !bytes.HasPrefix(b, []byte(catalogMagic)) {
		return nil, errBadCatalog
	}
	r := catalogReader{b: b[len(catalogMagic):]}
	if r.string() != model {
		return nil, errBadCatalog
	}
	c := &catalog{model: model, generation: r.string(), dim: int(r.uint())}
	groups := int(r.uint())
	for range groups {
		if r.err != nil {
			return nil, r.err
		}
		c.scopes = append(c.scopes, Scope(r.string()))
		c.keys = append(c.keys, r.string())
	}
	n, nv := int(r.uint()), int(r.uint())
	if r.err != nil || n < 0 || nv < 0 || nv > n || len(r.b) != n*recordSize+nv*4+nv*c.dim {
		return nil, errBadCatalog
	}
	c.seqs = make([]int64, n)
	c.groups = make([]uint32, n)
	c.vecAt = make([]int32, n)
	c.kinds = make([]uint8, n)
	for i := range n {
		rec := r.b[i*recordSize:]
		c.seqs[i] = int64(binary.LittleEndian.Uint64(rec))
		c.groups[i] = binary.LittleEndian.Uint32(rec[8:])
		c.vecAt[i] = int32(binary.LittleEndian.Uint32(rec[12:]))
		c.kinds[i] = rec[16]
		if int(c.groups[i]) >= groups || int(c.vecAt[i]) >= nv || (i > 0 && c.seqs[i] <= c.seqs[i-1]) {
			return nil, errBadCatalog
		}
	}
	rest := r.b[n*recordSize:]
	c.scales = make([]float32, nv)
	for i := range nv {
		c.scales[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
	}
	if raw := rest[4*nv:]; len(raw) > 0 {
		// The file's bytes are ours alone and never written again, so the
		// vectors can be read in place rather than copied.
		c.vecs = unsafe.Slice((*int8)(unsafe.Pointer(&raw[0])), len(raw))
	}
	return c, nil
}

type catalogReader struct {
	b   []byte
	err error
}

func (r *catalogReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errBadCatalog
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *catalogReader) string() string {
	n := r.uint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errBadCatalog
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
