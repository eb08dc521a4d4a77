package odb

import (
	"compress/zlib"
	"errors"
	"fmt"
	"io"
)

// readPacked reads the object at offset in p, applying its deltas.
func (db *DB) readPacked(p *pack, offset int64, depth int) (object, error) {
	if depth > maxChain {
		return object{}, fmt.Errorf("%w: a delta chain in %s is deeper than %d", ErrUnsupported, p.packPath, maxChain)
	}
	k := cacheKey{p, offset}
	if o, ok := db.cache[k]; ok {
		return o, nil
	}
	r, ok := db.entryAt(p.data, offset)
	if !ok {
		return object{}, fmt.Errorf("%w: %s has no entry at %d", ErrUnsupported, p.packPath, offset)
	}
	kind, size, err := entryHeader(r)
	if err != nil {
		return object{}, fmt.Errorf("%w: %s at %d: %w", ErrUnsupported, p.packPath, offset, err)
	}
	var o object
	switch kind {
	case typeCommit, typeTree, typeBlob, typeTag:
		data, err := db.inflate(r, size)
		if err != nil {
			return object{}, fmt.Errorf("%w: %s at %d: %w", ErrUnsupported, p.packPath, offset, err)
		}
		o = object{kind: kind, data: data}
	case typeOfsDelta, typeRefDelta:
		o, err = db.readDelta(p, offset, r, kind, size, depth)
		if err != nil {
			return object{}, err
		}
	default:
		return object{}, fmt.Errorf("%w: %s at %d has object type %d", ErrUnsupported, p.packPath, offset, kind)
	}
	if db.cached+len(o.data) <= maxCached {
		db.cache[k] = o
		db.cached += len(o.data)
	}
	return o, nil
}

// readDelta reads a delta's base, by its offset back in the same pack or
// by its id anywhere, and applies the delta that follows to it.
func (db *DB) readDelta(p *pack, offset int64, r entryReader, kind int, size int64, depth int) (object, error) {
	var base object
	var err error
	if kind == typeOfsDelta {
		back, ferr := ofsDeltaDistance(r)
		if ferr != nil || back <= 0 || back > offset {
			return object{}, fmt.Errorf("%w: %s at %d: a delta's base offset is out of the pack", ErrUnsupported, p.packPath, offset)
		}
		delta, ierr := db.inflate(r, size)
		if ierr != nil {
			return object{}, fmt.Errorf("%w: %s at %d: %w", ErrUnsupported, p.packPath, offset, ierr)
		}
		if base, err = db.readPacked(p, offset-back, depth+1); err != nil {
			return object{}, err
		}
		return patched(base, delta, p.packPath, offset)
	}
	var baseID [20]byte
	if _, err := io.ReadFull(r, baseID[:]); err != nil {
		return object{}, fmt.Errorf("%w: %s at %d: %w", ErrUnsupported, p.packPath, offset, err)
	}
	delta, err := db.inflate(r, size)
	if err != nil {
		return object{}, fmt.Errorf("%w: %s at %d: %w", ErrUnsupported, p.packPath, offset, err)
	}
	if base, err = db.read(baseID, depth+1); err != nil {
		return object{}, err
	}
	return patched(base, delta, p.packPath, offset)
}

func patched(base object, delta []byte, packPath string, offset int64) (object, error) {
	data, err := applyDelta(base.data, delta)
	if err != nil {
		return object{}, fmt.Errorf("%w: %s at %d: %w", ErrUnsupported, packPath, offset, err)
	}
	return object{kind: base.kind, data: data}, nil
}

// entryHeader reads a pack entry's type and inflated size: three bits of
// type and a little-endian base-128 size.
func entryHeader(r io.ByteReader) (kind int, size int64, err error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	kind, size = int(c>>4&7), int64(c&15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 56 {
			return 0, 0, errors.New("an entry's size is too long")
		}
		if c, err = r.ReadByte(); err != nil {
			return 0, 0, err
		}
		size |= int64(c&0x7f) << shift
	}
	return kind, size, nil
}

// ofsDeltaDistance reads how far back an offset delta's base is, in git's
// encoding that adds one at each continuation.
func ofsDeltaDistance(r io.ByteReader) (int64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	d := int64(c & 0x7f)
	for c&0x80 != 0 {
		if d > 1<<55 {
			return 0, errors.New("a delta's base offset is too long")
		}
		if c, err = r.ReadByte(); err != nil {
			return 0, err
		}
		d = (d+1)<<7 | int64(c&0x7f)
	}
	return d, nil
}

// inflate reads size bytes of zlib data from r through the DB's one
// decompressor, reset for each entry: making one costs more than
// inflating a tree does.
func (db *DB) inflate(r io.Reader, size int64) ([]byte, error) {
	if size < 0 || size > maxObject {
		return nil, fmt.Errorf("an object of %d bytes is past what is read here", size)
	}
	if err := db.resetZlib(r); err != nil {
		return nil, err
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(db.zlib, data); err != nil {
		return nil, err
	}
	return data, nil
}

// applyDelta rebuilds an object from its base and a delta: the sizes of
// both, then instructions copying a range of the base or inserting bytes.
func applyDelta(base, delta []byte) ([]byte, error) {
	baseSize, delta, err := deltaSize(delta)
	if err != nil {
		return nil, err
	}
	if baseSize != uint64(len(base)) {
		return nil, fmt.Errorf("a delta is for a base of %d bytes, not %d", baseSize, len(base))
	}
	size, delta, err := deltaSize(delta)
	if err != nil {
		return nil, err
	}
	if size > maxObject {
		return nil, fmt.Errorf("an object of %d bytes is past what is read here", size)
	}
	out := make([]byte, 0, size)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, n uint64
			for i := range 7 {
				if op&(1<<i) == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, errors.New("a delta's copy is cut short")
				}
				if i < 4 {
					off |= uint64(delta[0]) << (8 * i)
				} else {
					n |= uint64(delta[0]) << (8 * (i - 4))
				}
				delta = delta[1:]
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(base)) {
				return nil, errors.New("a delta copies past its base")
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			if int(op) > len(delta) {
				return nil, errors.New("a delta's insert is cut short")
			}
			out = append(out, delta[:op]...)
			delta = delta[op:]
		default:
			return nil, errors.New("a delta has the reserved instruction 0")
		}
	}
	if uint64(len(out)) != size {
		return nil, fmt.Errorf("a delta made %d bytes, not the %d it names", len(out), size)
	}
	return out, nil
}

func deltaSize(delta []byte) (uint64, []byte, error) {
	var size uint64
	for shift := 0; ; shift += 7 {
		if len(delta) == 0 || shift > 63 {
			return 0, nil, errors.New("a delta's size is cut short")
		}
		c := delta[0]
		delta = delta[1:]
		size |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return size, delta, nil
		}
	}
}

// resetZlib points the DB's one decompressor at r.
func (db *DB) resetZlib(r io.Reader) error {
	if db.zlib == nil {
		z, err := zlib.NewReader(r)
		if err != nil {
			return err
		}
		db.zlib = z
		return nil
	}
	return db.zlib.(zlib.Resetter).Reset(r, nil)
}
