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
)

// Reading vectors row by row through database/sql costs about 2µs a row, so
// a scan of 100k memories would spend 200ms before any arithmetic. The
// embeddings table stays the truth; a packed copy of one model's vectors is
// kept beside the database and trusted only while its generation equals the
// database's, which every write transaction increments. Deleting the file
// is always safe: the next search rebuilds it.

const (
	generationKey = "generation"
	packMagic     = "acolyte-vectors/1\n"
)

// bumpGeneration runs inside every write transaction.
const bumpGeneration = `INSERT INTO state (key, value) VALUES ('` + generationKey + `', '1')
	ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`

// vectorPack is every vector of one model with what visibility needs.
type vectorPack struct {
	generation string
	dim        int
	// scopes[i] and keys[i] describe group i.
	scopes []Scope
	keys   []string
	seqs   []int64
	groups []uint32
	kinds  []uint8
	scales []float32
	vecs   []int8
}

func (s *Store) packPath(model string) string {
	sum := sha256.Sum256([]byte(model))
	return s.path + "-vectors-" + hex.EncodeToString(sum[:6])
}

// loadVectors returns the vectors of the current embedder that are visible
// from vis and pass f.
func (s *Store) loadVectors(ctx context.Context, vis Visibility, f Filter) ([]storedVector, error) {
	if s.embedder == nil {
		return nil, nil
	}
	p, err := s.vectorPack(ctx)
	if err != nil {
		return nil, err
	}
	var topicSeqs map[int64]bool
	if f.Topic != "" {
		if topicSeqs, err = s.seqsWithTopic(ctx, f.Topic); err != nil {
			return nil, err
		}
	}
	visibleGroup := make([]bool, len(p.scopes))
	for i := range p.scopes {
		m := Memory{Scope: p.scopes[i], ScopeKey: p.keys[i]}
		visibleGroup[i] = vis.CanSee(m) && (f.Scope == "" || f.Scope == m.Scope)
	}
	kind := uint8(0)
	if f.Kind != "" {
		kind = kindCode(f.Kind)
	}
	out := make([]storedVector, 0, len(p.seqs))
	for i, seq := range p.seqs {
		if !visibleGroup[p.groups[i]] || (kind != 0 && p.kinds[i] != kind) || (topicSeqs != nil && !topicSeqs[seq]) {
			continue
		}
		out = append(out, storedVector{seq: seq, scale: p.scales[i], q: p.vecs[i*p.dim : (i+1)*p.dim]})
	}
	return out, nil
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

// vectorPack returns the packed vectors of the current model, from the file
// when it is current, else rebuilt from the database.
func (s *Store) vectorPack(ctx context.Context) (*vectorPack, error) {
	gen, err := s.GetState(ctx, generationKey)
	if err != nil {
		return nil, err
	}
	model := s.embedder.Model()
	path := s.packPath(model)
	if b, err := os.ReadFile(path); err == nil {
		if p, err := decodePack(b, model); err == nil && p.generation == gen {
			return p, nil
		}
	}
	p, err := s.buildPack(ctx, model)
	if err != nil {
		return nil, err
	}
	// The pack is only a cache; failing to save it costs the next search time, not correctness.
	_ = writePack(path, p, model)
	return p, nil
}

// buildPack reads the vectors in one statement, so the generation it
// records is the one the rows belong to.
func (s *Store) buildPack(ctx context.Context, model string) (*vectorPack, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT coalesce((SELECT value FROM state WHERE key = '`+generationKey+`'), ''),
		e.seq, m.scope, m.scope_key, m.kind, e.vec
		FROM embeddings e JOIN memories m ON m.seq = e.seq
		WHERE e.model = ? AND e.content_hash = m.content_hash ORDER BY m.scope, m.scope_key, e.seq`, model)
	if err != nil {
		return nil, s.explain(fmt.Errorf("load vectors: %w", err))
	}
	defer rows.Close()
	p := &vectorPack{}
	group := map[[2]string]uint32{}
	for rows.Next() {
		var (
			seq        int64
			scope      Scope
			key        string
			kind       Kind
			blob       []byte
			generation string
		)
		if err := rows.Scan(&generation, &seq, &scope, &key, &kind, &blob); err != nil {
			return nil, err
		}
		p.generation = generation
		if len(blob) < 5 {
			continue
		}
		if p.dim == 0 {
			p.dim = len(blob) - 4
		}
		if len(blob)-4 != p.dim {
			continue
		}
		g, ok := group[[2]string{string(scope), key}]
		if !ok {
			g = uint32(len(p.scopes))
			group[[2]string{string(scope), key}] = g
			p.scopes = append(p.scopes, scope)
			p.keys = append(p.keys, key)
		}
		p.seqs = append(p.seqs, seq)
		p.groups = append(p.groups, g)
		p.kinds = append(p.kinds, kindCode(kind))
		p.scales = append(p.scales, math.Float32frombits(binary.LittleEndian.Uint32(blob)))
		for _, b := range blob[4:] {
			p.vecs = append(p.vecs, int8(b))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(p.seqs) == 0 {
		// No rows means the generation was not read; an empty pack must not be trusted later.
		if p.generation, err = s.GetState(ctx, generationKey); err != nil {
			return nil, err
		}
		p.generation += "-empty"
	}
	return p, nil
}

// The file: magic, model, generation, dim, groups, then the columns.
func writePack(path string, p *vectorPack, model string) error {
	var b bytes.Buffer
	b.WriteString(packMagic)
	putString(&b, model)
	putString(&b, p.generation)
	putUint(&b, uint64(p.dim))
	putUint(&b, uint64(len(p.scopes)))
	for i := range p.scopes {
		putString(&b, string(p.scopes[i]))
		putString(&b, p.keys[i])
	}
	putUint(&b, uint64(len(p.seqs)))
	for i := range p.seqs {
		binary.Write(&b, binary.LittleEndian, p.seqs[i])
		binary.Write(&b, binary.LittleEndian, p.groups[i])
		binary.Write(&b, binary.LittleEndian, math.Float32bits(p.scales[i]))
		b.WriteByte(p.kinds[i])
	}
	for _, v := range p.vecs {
		b.WriteByte(byte(v))
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

func putString(b *bytes.Buffer, s string) {
	putUint(b, uint64(len(s)))
	b.WriteString(s)
}

func putUint(b *bytes.Buffer, v uint64) {
	b.Write(binary.AppendUvarint(nil, v))
}

var errBadPack = errors.New("vector pack is unreadable")

func decodePack(b []byte, model string) (*vectorPack, error) {
	if !bytes.HasPrefix(b, []byte(packMagic)) {
		return nil, errBadPack
	}
	r := packReader{b: b[len(packMagic):]}
	if r.string() != model {
		return nil, errBadPack
	}
	p := &vectorPack{generation: r.string(), dim: int(r.uint())}
	groups := int(r.uint())
	for range groups {
		if r.err != nil {
			return nil, r.err
		}
		p.scopes = append(p.scopes, Scope(r.string()))
		p.keys = append(p.keys, r.string())
	}
	n := int(r.uint())
	const fixed = 8 + 4 + 4 + 1
	if r.err != nil || n < 0 || len(r.b) != n*fixed+n*p.dim {
		return nil, errBadPack
	}
	p.seqs = make([]int64, n)
	p.groups = make([]uint32, n)
	p.scales = make([]float32, n)
	p.kinds = make([]uint8, n)
	for i := range n {
		rec := r.b[i*fixed:]
		p.seqs[i] = int64(binary.LittleEndian.Uint64(rec))
		p.groups[i] = binary.LittleEndian.Uint32(rec[8:])
		p.scales[i] = math.Float32frombits(binary.LittleEndian.Uint32(rec[12:]))
		p.kinds[i] = rec[16]
		if int(p.groups[i]) >= groups {
			return nil, errBadPack
		}
	}
	raw := r.b[n*fixed:]
	p.vecs = make([]int8, len(raw))
	for i, v := range raw {
		p.vecs[i] = int8(v)
	}
	return p, nil
}

type packReader struct {
	b   []byte
	err error
}

func (r *packReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errBadPack
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *packReader) string() string {
	n := r.uint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errBadPack
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
