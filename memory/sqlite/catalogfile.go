package sqlite

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"unsafe"

	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/internal/mapfile"
	"github.com/acolyte-dev/acolyte/memory"
)

// The catalog file. Each column has room beyond the memories it holds, so
// a write that adds, changes or removes a few memories patches the file in
// place (patchCatalog) instead of copying it whole (12 MB at 100k
// memories):
//
//	magic
//	fixed: headCap, rowCap, vecCap, dim (uint32 each), never changed
//	head: payload length and CRC-32C (uint32 each), then the payload:
//	      model, generation, the groups, the number of memories, of
//	      vectors and of rows marked removed; headCap bytes in all, the
//	      rest unused
//	columns, each at an offset aligned for its type and sized by its
//	      capacity: seqs, groups, vecAt, kinds (rowCap each), scales and
//	      vecs (vecCap each)
//
// All numbers are little-endian. A patch writes new rows and new vectors
// past the ones the head counts, changes a counted row only in its kind
// (kindGone for a memory removed) and its vector index (a changed memory's
// new vector goes past the counted ones), then writes the head, last. A
// reader decodes the head once, copies the kinds and vector indexes of the
// rows it counts, and reads only those rows and vectors, so nothing a
// patch writes changes what it reads. A head caught half written fails its
// CRC, and one a crash left unwritten names the generation before the
// write, which the database has passed: either way the next search
// rebuilds. The patch is synced before the head is written, so not even a
// power loss leaves a head over rows the disk never got. The renamed files
// are not synced: the catalog is a cache of the database, and a file a
// crash cut short fails its magic or layout and is rebuilt.
//
// Version 4 added the changes in place; a version 3 reader would count a
// removed row, so the version is also in the file's name (catalogPath).
const catalogMagic = "acolyte-catalog/4\n"

const catalogFixedSize = len(catalogMagic) + 16

// catalogLayout is the fixed part of a file: where everything lies.
type catalogLayout struct {
	headCap, rowCap, vecCap, dim int64
}

// catalogOffsets are where a layout's columns start, and where it ends.
type catalogOffsets struct {
	seqs, groups, vecAt, kinds, scales, vecs, end int64
}

func alignUp(n, to int64) int64 { return (n + to - 1) / to * to }

func (l catalogLayout) offsets() catalogOffsets {
	var o catalogOffsets
	o.seqs = alignUp(int64(catalogFixedSize)+l.headCap, 8)
	o.groups = o.seqs + 8*l.rowCap
	o.vecAt = o.groups + 4*l.rowCap
	o.kinds = o.vecAt + 4*l.rowCap
	o.scales = alignUp(o.kinds+l.rowCap, 4)
	o.vecs = o.scales + 4*l.vecCap
	o.end = o.vecs + l.vecCap*l.dim
	return o
}

// catalogRoom is how many rows a written file keeps free for appends: a
// sixteenth of what it holds, at least 256, so a rewrite of the whole file
// comes once every n/16 remembers and the room costs about 6% more disk.
func catalogRoom(n int) int { return max(n/16, 256) }

// headRoom is the spare space in the head for new groups (a new project's
// or session's key) and a longer generation.
const headRoom = 1024

// catalogHead is the payload of the head.
type catalogHead struct {
	model, generation string
	scopes            []memory.Scope
	keys              []string
	n, nv             int
	// gone counts the rows marked kindGone, which a patch keeps under an
	// eighth of the rows by rewriting the file instead.
	gone int
}

func (h *catalogHead) encode() []byte {
	var b bytes.Buffer
	b.Write(make([]byte, 8)) // length and CRC, filled in below
	putString(&b, h.model)
	putString(&b, h.generation)
	putUint(&b, uint64(len(h.scopes)))
	for i := range h.scopes {
		putString(&b, string(h.scopes[i]))
		putString(&b, h.keys[i])
	}
	putUint(&b, uint64(h.n))
	putUint(&b, uint64(h.nv))
	putUint(&b, uint64(h.gone))
	out := b.Bytes()
	binary.LittleEndian.PutUint32(out, uint32(len(out)-8))
	binary.LittleEndian.PutUint32(out[4:], crc32.Checksum(out[8:], castagnoli()))
	return out
}

// castagnoli is made on first use: building its tables costs about
// 0.25 ms, which every process, even `acolyte --version`, paid at init.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// decodeHead reads the head region of a file.
func decodeHead(head []byte) (catalogHead, error) {
	var h catalogHead
	if len(head) < 8 {
		return h, errBadCatalog
	}
	size := binary.LittleEndian.Uint32(head)
	if uint64(size) > uint64(len(head)-8) {
		return h, errBadCatalog
	}
	payload := head[8 : 8+size]
	if crc32.Checksum(payload, castagnoli()) != binary.LittleEndian.Uint32(head[4:]) {
		return h, errBadCatalog
	}
	r := catalogReader{b: payload}
	h.model, h.generation = r.string(), r.string()
	groups := r.uint()
	for range groups {
		if r.err != nil {
			return h, errBadCatalog
		}
		h.scopes = append(h.scopes, memory.Scope(r.string()))
		h.keys = append(h.keys, r.string())
	}
	n, nv, gone := r.uint(), r.uint(), r.uint()
	if r.err != nil || r.at != len(payload) || n > math.MaxInt32 || nv > math.MaxInt32 || gone > n {
		return h, errBadCatalog
	}
	h.n, h.nv, h.gone = int(n), int(nv), int(gone)
	return h, nil
}

// decodeLayout reads the fixed part of a file of size bytes.
func decodeLayout(b []byte, size int64) (catalogLayout, catalogOffsets, error) {
	if len(b) < catalogFixedSize || !bytes.HasPrefix(b, []byte(catalogMagic)) {
		return catalogLayout{}, catalogOffsets{}, errBadCatalog
	}
	f := b[len(catalogMagic):]
	l := catalogLayout{
		headCap: int64(binary.LittleEndian.Uint32(f)),
		rowCap:  int64(binary.LittleEndian.Uint32(f[4:])),
		vecCap:  int64(binary.LittleEndian.Uint32(f[8:])),
		dim:     int64(binary.LittleEndian.Uint32(f[12:])),
	}
	if l.headCap < 8 || l.vecCap > l.rowCap || l.dim > 1<<16 {
		return l, catalogOffsets{}, errBadCatalog
	}
	o := l.offsets()
	if o.end != size {
		return l, o, errBadCatalog
	}
	return l, o, nil
}

// writeCatalog writes c to path as a new file, with room to append to.
func writeCatalog(path string, c *catalog) error {
	n, nv := len(c.seqs), len(c.scales)
	gone := bytes.Count(c.kinds, []byte{kindGone})
	head := (&catalogHead{model: c.model, generation: c.generation, scopes: c.scopes, keys: c.keys, n: n, nv: nv, gone: gone}).encode()
	l := catalogLayout{headCap: int64(len(head) + headRoom), rowCap: int64(n + catalogRoom(n)), dim: int64(c.dim)}
	if c.dim > 0 {
		l.vecCap = int64(nv + catalogRoom(nv))
	}
	if l.rowCap > math.MaxUint32 {
		return fmt.Errorf("write the search catalog: %d memories is too many", n)
	}
	o := l.offsets()
	fixed := []byte(catalogMagic)
	for _, v := range []int64{l.headCap, l.rowCap, l.vecCap, l.dim} {
		fixed = binary.LittleEndian.AppendUint32(fixed, uint32(v))
	}

	atomicfile.RemoveStale(filepath.Dir(path), staleTempAge, filepath.Base(path))
	removeLegacyTemps(path, staleTempAge)
	// A catalog is a cache rebuilt from the database whenever it is missing
	// or stale, so it skips the fsyncs a file of record needs.
	return atomicfile.Write(path, atomicfile.Options{Perm: 0o600}, func(f io.Writer) error {
		w := &offsetWriter{w: bufio.NewWriterSize(f, 64<<10)}
		w.Write(fixed)
		w.Write(head)
		w.zeroTo(o.seqs)
		writeColumn(w, c.seqs, func(b []byte, v int64) { binary.LittleEndian.PutUint64(b, uint64(v)) })
		w.zeroTo(o.groups)
		writeColumn(w, c.groups, binary.LittleEndian.PutUint32)
		w.zeroTo(o.vecAt)
		writeColumn(w, c.vecAt, func(b []byte, v int32) { binary.LittleEndian.PutUint32(b, uint32(v)) })
		w.zeroTo(o.kinds)
		w.Write(c.kinds)
		w.zeroTo(o.scales)
		writeColumn(w, c.scales, func(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) })
		w.zeroTo(o.vecs)
		writeColumn(w, c.vecs, func(b []byte, v int8) { b[0] = byte(v) })
		w.zeroTo(o.end)
		// bufio keeps the first error and Flush returns it.
		return w.w.Flush()
	})
}

// offsetWriter counts what it writes, so columns land at their offsets.
type offsetWriter struct {
	w  *bufio.Writer
	at int64
}

func (w *offsetWriter) Write(b []byte) (int, error) {
	w.at += int64(len(b))
	return w.w.Write(b)
}

var zeros [64 << 10]byte

func (w *offsetWriter) zeroTo(at int64) {
	for w.at < at {
		w.Write(zeros[:min(at-w.at, int64(len(zeros)))])
	}
}

// writeColumn writes xs little-endian: its memory as it lies where the
// machine is little-endian, else one value at a time. Errors stick in w.
func writeColumn[T int64 | int32 | uint32 | float32 | int8](w io.Writer, xs []T, put func([]byte, T)) {
	if len(xs) == 0 {
		return
	}
	size := int(unsafe.Sizeof(xs[0]))
	if littleEndian {
		w.Write(unsafe.Slice((*byte)(unsafe.Pointer(&xs[0])), size*len(xs)))
		return
	}
	var b [8]byte
	for _, x := range xs {
		put(b[:size], x)
		w.Write(b[:size])
	}
}

func putString(b *bytes.Buffer, s string) {
	putUint(b, uint64(len(s)))
	b.WriteString(s)
}

func putUint(b *bytes.Buffer, v uint64) {
	b.Write(binary.AppendUvarint(nil, v))
}

var errBadCatalog = errors.New("search catalog is unreadable")

// readCatalog maps the file at path and reads it in place.
func readCatalog(path, model string) (*catalog, error) {
	data, unmap, err := mapfile.Map(path)
	if err != nil {
		return nil, err
	}
	c, err := decodeCatalog(data, model)
	if err != nil {
		unmap()
		return nil, err
	}
	c.unmap = unmap
	return c, nil
}

// decodeCatalog reads a catalog from b, pointing into b where it can: the
// caller must keep the seqs, groups and vectors it counts unchanged for as
// long as the catalog is used (patches write only past them).
func decodeCatalog(b []byte, model string) (*catalog, error) {
	l, o, err := decodeLayout(b, int64(len(b)))
	if err != nil {
		return nil, err
	}
	h, err := decodeHead(b[catalogFixedSize : int64(catalogFixedSize)+l.headCap])
	if err != nil || h.model != model || int64(h.n) > l.rowCap || int64(h.nv) > l.vecCap {
		return nil, errBadCatalog
	}
	n, nv := int64(h.n), int64(h.nv)
	c := &catalog{model: model, generation: h.generation, dim: int(l.dim), scopes: h.scopes, keys: h.keys}
	c.seqs = column[int64](b[o.seqs:o.seqs+8*n], binary.LittleEndian.Uint64)
	c.groups = column[uint32](b[o.groups:o.groups+4*n], binary.LittleEndian.Uint32)
	// A patch in place may change the kinds and vector indexes of counted
	// rows under this mapping, so they are copied; nothing else this
	// catalog reads is ever written again (see the format above).
	c.vecAt = slices.Clone(column[int32](b[o.vecAt:o.vecAt+4*n], binary.LittleEndian.Uint32))
	if n > 0 {
		c.kinds = slices.Clone(b[o.kinds : o.kinds+n])
	}
	c.scales = column[float32](b[o.scales:o.scales+4*nv], func(b []byte) float32 {
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	})
	if raw := b[o.vecs : o.vecs+nv*l.dim]; len(raw) > 0 {
		c.vecs = unsafe.Slice((*int8)(unsafe.Pointer(&raw[0])), len(raw))
	}
	groups := len(c.scopes)
	for i := range int(n) {
		if int(c.groups[i]) >= groups || c.vecAt[i] < -1 || int64(c.vecAt[i]) >= nv || (i > 0 && c.seqs[i] <= c.seqs[i-1]) {
			return nil, errBadCatalog
		}
	}
	return c, nil
}

// littleEndian is whether this machine stores numbers as the file does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// column views b as a []T in place when the machine's byte order and b's
// alignment allow, and otherwise decodes a copy with get.
func column[T int64 | int32 | uint32 | float32, U uint64 | uint32 | float32](b []byte, get func([]byte) U) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(b) == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size)
	}
	out := make([]T, len(b)/size)
	for i := range out {
		out[i] = T(get(b[i*size:]))
	}
	return out
}

type catalogReader struct {
	b   []byte
	at  int
	err error
}

func (r *catalogReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.at:])
	if n <= 0 {
		r.err = errBadCatalog
		return 0
	}
	r.at += n
	return v
}

func (r *catalogReader) string() string {
	n := r.uint()
	return string(r.take(int(min(n, math.MaxInt32))))
}

func (r *catalogReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b)-r.at {
		r.err = errBadCatalog
		return nil
	}
	out := r.b[r.at : r.at+n : r.at+n]
	r.at += n
	return out
}

// errNoRoom is a patch the file cannot take in place.
var errNoRoom = errors.New("the search catalog has no room for the patch")

// patchCatalog brings the file at path from generation p.before to p.gen
// in place, if it holds the catalog of p.before and has room: the
// memories p adds as rows past the counted ones, and those it changes or
// removes in the rows that hold them (see the format above), then the head.
func patchCatalog(path string, p *catalogPatch) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	fixed := make([]byte, catalogFixedSize)
	if _, err := f.ReadAt(fixed, 0); err != nil {
		return err
	}
	l, o, err := decodeLayout(fixed, st.Size())
	if err != nil {
		return err
	}
	headBytes := make([]byte, l.headCap)
	if _, err := f.ReadAt(headBytes, int64(catalogFixedSize)); err != nil {
		return err
	}
	h, err := decodeHead(headBytes)
	if err != nil {
		return err
	}
	if h.model != p.model || h.generation != p.before || int64(h.n) > l.rowCap || int64(h.nv) > l.vecCap {
		return errNoRoom
	}
	rows := catalogRows{f: f, o: o, n: int64(h.n)}
	e, err := patchRows(&h, l, rows, p)
	if err != nil {
		return err
	}
	n, nv := int64(h.n), int64(h.nv)
	type write struct {
		b  []byte
		at int64
	}
	writes := []write{
		{e.seqs, o.seqs + 8*n}, {e.groups, o.groups + 4*n}, {e.vecAt, o.vecAt + 4*n},
		{e.kinds, o.kinds + n}, {e.scales, o.scales + 4*nv}, {e.vecs, o.vecs + nv*l.dim},
	}
	for _, c := range e.changed {
		vecAt := binary.LittleEndian.AppendUint32(nil, uint32(c.vecAt))
		writes = append(writes, write{vecAt, o.vecAt + 4*c.row}, write{[]byte{c.kind}, o.kinds + c.row})
	}
	for _, w := range writes {
		if _, err := f.WriteAt(w.b, w.at); err != nil {
			return err
		}
	}
	// The patch reaches the disk before the head that counts it: a power
	// loss must not leave a head whose CRC holds over rows that were never
	// written, which no check would catch. The head itself is not synced;
	// one that is lost names the generation before, and the next search
	// rebuilds. A sync of the few pages written costs about half a
	// millisecond here.
	if err := f.Sync(); err != nil {
		return err
	}
	h.n += len(e.seqs) / 8
	h.nv += len(e.scales) / 4
	h.generation = p.gen
	head := h.encode()
	if int64(len(head)) > l.headCap {
		return errNoRoom // checked in patchRows; kept as the last guard
	}
	_, err = f.WriteAt(head, int64(catalogFixedSize))
	return err
}

// catalogRows reads the counted rows of a catalog file one value at a
// time: a patch looks up a few rows by seq, which costs a few reads of 8
// bytes instead of reading a column of 100k rows.
type catalogRows struct {
	f *os.File
	o catalogOffsets
	n int64
}

func (r catalogRows) read(at int64, size int) (uint64, error) {
	var b [8]byte
	if _, err := r.f.ReadAt(b[:size], at); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// find returns the row that holds seq, or -1.
func (r catalogRows) find(seq int64) (int64, error) {
	lo, hi := int64(0), r.n
	for lo < hi {
		mid := lo + (hi-lo)/2
		v, err := r.read(r.o.seqs+8*mid, 8)
		if err != nil {
			return -1, err
		}
		switch at := int64(v); {
		case at == seq:
			return mid, nil
		case at < seq:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return -1, nil
}

// encodedRows are new rows, column by column, as the file holds them, and
// the changes to counted rows.
type encodedRows struct {
	seqs, groups, vecAt, kinds, scales, vecs []byte
	changed                                  []rowChange
}

// rowChange is a counted row's new kind and vector index.
type rowChange struct {
	row   int64
	kind  uint8
	vecAt int32
}

// patchRows encodes what p does to the rows of a file laid out as l whose
// head is h, adding any new group to h: a memory past the last counted seq
// becomes a new row, one that a counted row holds changes that row in
// place, and a touched seq p no longer holds marks its row removed. Every
// new vector goes past the counted ones. A vector of another dimension is
// left out, as catalogBuilder.add leaves it out; a first vector in a file
// laid out without any, a memory that moved to another group, or a patch
// past the file's room needs a rewrite.
func patchRows(h *catalogHead, l catalogLayout, rows catalogRows, p *catalogPatch) (encodedRows, error) {
	var e encodedRows
	last := int64(math.MinInt64)
	if rows.n > 0 {
		v, err := rows.read(rows.o.seqs+8*(rows.n-1), 8)
		if err != nil {
			return e, err
		}
		last = int64(v)
	}
	nv, added := h.nv, 0
	fresh := make(map[int64]bool, len(p.fresh))
	for _, r := range p.fresh {
		fresh[r.seq] = true
		g := groupIn(h, r.scope, r.key)
		at := int32(-1)
		if len(r.vec) > 0 && l.dim == 0 {
			return e, errNoRoom
		}
		if len(r.vec) > 0 && int64(len(r.vec)) == l.dim {
			if int64(nv) >= l.vecCap {
				return e, errNoRoom
			}
			at = int32(nv)
			nv++
			e.scales = binary.LittleEndian.AppendUint32(e.scales, math.Float32bits(r.scale))
			e.vecs = append(e.vecs, unsafe.Slice((*byte)(unsafe.Pointer(&r.vec[0])), len(r.vec))...)
		}
		if r.seq <= last {
			row, err := rows.find(r.seq)
			if err != nil {
				return e, err
			}
			if row < 0 {
				return e, errNoRoom
			}
			if was, err := rows.read(rows.o.groups+4*row, 4); err != nil || uint32(was) != g {
				return e, errNoRoom
			}
			if kind, err := rows.read(rows.o.kinds+row, 1); err != nil {
				return e, err
			} else if uint8(kind) == kindGone {
				h.gone-- // a seq taken again after its memory was removed
			}
			e.changed = append(e.changed, rowChange{row: row, kind: r.kind, vecAt: at})
			continue
		}
		if int64(h.n+added) >= l.rowCap {
			return e, errNoRoom
		}
		added++
		last = r.seq
		e.seqs = binary.LittleEndian.AppendUint64(e.seqs, uint64(r.seq))
		e.groups = binary.LittleEndian.AppendUint32(e.groups, g)
		e.vecAt = binary.LittleEndian.AppendUint32(e.vecAt, uint32(at))
		e.kinds = append(e.kinds, r.kind)
	}
	for seq := range p.touched {
		if fresh[seq] || seq > last {
			continue
		}
		row, err := rows.find(seq)
		if err != nil {
			return e, err
		}
		if row < 0 {
			continue
		}
		if kind, err := rows.read(rows.o.kinds+row, 1); err != nil {
			return e, err
		} else if uint8(kind) != kindGone {
			h.gone++
		}
		e.changed = append(e.changed, rowChange{row: row, kind: kindGone, vecAt: -1})
	}
	probe := *h
	probe.n, probe.nv = h.n+added, nv
	// Removed rows cost every search a look, so past an eighth of the
	// rows the file is rewritten without them.
	if probe.gone*8 > probe.n || int64(len(probe.encode())) > l.headCap {
		return e, errNoRoom
	}
	return e, nil
}

// groupIn returns the group of scope and key in h, adding it if new.
func groupIn(h *catalogHead, scope memory.Scope, key string) uint32 {
	for i := range h.scopes {
		if h.scopes[i] == scope && h.keys[i] == key {
			return uint32(i)
		}
	}
	h.scopes = append(h.scopes, scope)
	h.keys = append(h.keys, key)
	return uint32(len(h.scopes) - 1)
}
