package odb

import (
	"bufio"
	"bytes"
	"io"
	"os"

	"github.com/acolyte-dev/acolyte/internal/mapfile"
)

// source is a pack or pack index: mapped where files can be, so that an
// entry is read without a system call, or read through the file. Git
// writes both once, under a temporary name, and never changes them after,
// as mapping needs.
type source struct {
	mapped []byte
	unmap  func()
	file   *os.File
}

// entryReader reads a pack entry: what flate needs to stop at the end of
// a zlib stream, without reading past it.
type entryReader interface {
	io.Reader
	io.ByteReader
}

func openSource(path string, mapped bool) (*source, error) {
	if mapped {
		data, unmap, err := mapfile.Map(path)
		if err != nil {
			return nil, err
		}
		return &source{mapped: data, unmap: unmap}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &source{file: f}, nil
}

func (s *source) ReadAt(p []byte, off int64) (int, error) {
	if s.file != nil {
		return s.file.ReadAt(p, off)
	}
	if off < 0 || off > int64(len(s.mapped)) {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, s.mapped[off:])
	if n < len(p) {
		return n, io.ErrUnexpectedEOF
	}
	return n, nil
}

func (s *source) Close() error {
	if s.file != nil {
		return s.file.Close()
	}
	s.unmap()
	return nil
}

// entryAt reads from offset on, through the DB's one reader of each kind:
// a delta chain is read an entry at a time, and a buffer each would cost
// more than the entry.
func (db *DB) entryAt(s *source, offset int64) (entryReader, bool) {
	if s.file == nil {
		if offset < 0 || offset >= int64(len(s.mapped)) {
			return nil, false
		}
		db.bytes.Reset(s.mapped[offset:])
		return &db.bytes, true
	}
	r := io.NewSectionReader(s.file, offset, 1<<62)
	if db.buffer == nil {
		db.buffer = bufio.NewReaderSize(r, 4096)
	} else {
		db.buffer.Reset(r)
	}
	return db.buffer, true
}

var _ entryReader = (*bytes.Reader)(nil)
