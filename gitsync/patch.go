package gitsync

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/acolyte-dev/acolyte/memory"
)

// A project write used to decode the whole memories file, re-encode it and
// re-import the whole scope into the index: 0.4 s at 10k memories and 2.3 s
// at 50k. Most writes add or remove a line or two, so when the index is
// known to hold exactly what the file holds, a write patches the file's
// bytes and the index's rows instead. "Known" means the file's content hash
// is the one recorded by the last import or write, and that import warned
// of nothing: then every line was accepted by Decode when it was imported,
// and the index can answer the duplicate check. Anything else (the file changed behind acolyte's back, a
// line this code cannot place) falls back to the full rewrite, which is
// always correct.

// errNotPatchable tells a caller to take the full-rewrite path.
var errNotPatchable = errors.New("memories file cannot be patched in place")

// patch runs one fast-path write under the .acolyte/ lock. edit gets the
// file's bytes and returns the new content as parts to write in order, nil
// for no change, or errNotPatchable; index then
// brings the index to the new file. The file is written first: if index
// fails, the recorded hash no longer matches and the next command
// re-imports.
func (w *Workspace) patch(ctx context.Context, edit func(data []byte) ([][]byte, error), index func() error) error {
	dir := filepath.Join(w.Repo.Root, Dir)
	if _, err := os.Stat(dir); err != nil {
		return errNotPatchable // the first write also creates .gitattributes
	}
	unlock, err := LockDir(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	path := MemoriesPath(w.Repo.Root)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return errNotPatchable
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	last, err := w.store.GetState(ctx, w.stateKey())
	if err != nil {
		return err
	}
	// An import that worked around a problem (a line it could not read, an
	// id on two lines) left the index short of the file: only the full
	// rewrite, which refuses to drop such lines, may touch it.
	if lastHash, _, warnings := parseImportState(last); lastHash != sha256Hex(data) || len(warnings) > 0 {
		return errNotPatchable
	}
	next, err := edit(data)
	if err != nil || next == nil {
		return err
	}
	if err := writeAtomic(path, next...); err != nil {
		return err
	}
	if err := index(); err != nil {
		return fmt.Errorf("%s was written but the index was not updated (the next command retries): %w", path, err)
	}
	return w.store.SetState(ctx, w.stateKey(), sha256Hex(next...))
}

// sha256Hex is the content hash Refresh records, of the parts in order.
func sha256Hex(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// idPrefix starts every canonical memory line: the id is the first key.
const idPrefix = `{"id":"`

// lineID returns the id of a canonical memory line.
func lineID(line []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(idPrefix))
	if !ok {
		return "", false
	}
	id, _, ok := bytes.Cut(rest, []byte(`"`))
	return string(id), ok
}

// eachLine calls fn with the start offset and bytes (newline included) of
// every memory line after the header, stopping when fn returns false.
func eachLine(data []byte, fn func(start int, line []byte) bool) error {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return errNotPatchable
	}
	for start := nl + 1; start < len(data); {
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			return errNotPatchable // no trailing newline: not canonical
		}
		end += start + 1
		if !fn(start, data[start:end]) {
			return nil
		}
		start = end
	}
	return nil
}

// insertLine adds the encoded memory m to a memories file in id order. New
// ids are time-ordered, so the place is almost always the end.
func insertLine(data []byte, m memory.Memory) ([][]byte, error) {
	line := encodeLine(toRecord(m))
	at := len(data)
	var bad bool
	err := eachLine(data, func(start int, l []byte) bool {
		id, ok := lineID(l)
		switch {
		case !ok || id == m.ID:
			bad = true
			return false
		case id > m.ID:
			at = start
			return false
		}
		return true
	})
	if err != nil || bad {
		return nil, errNotPatchable
	}
	return [][]byte{data[:at], line, data[at:]}, nil
}

// removeLines drops the lines of the memories with these ids. Every id must
// be found exactly once.
func removeLines(data []byte, ids map[string]bool) ([][]byte, error) {
	// The kept runs of lines, in order, sharing data's memory.
	var out [][]byte
	from := 0
	found := 0
	var bad bool
	err := eachLine(data, func(start int, l []byte) bool {
		id, ok := lineID(l)
		if !ok {
			bad = true
			return false
		}
		if ids[id] {
			found++
			out = append(out, data[from:start])
			from = start + len(l)
		}
		return true
	})
	if err != nil || bad || found != len(ids) {
		return nil, errNotPatchable
	}
	return append(out, data[from:]), nil
}

// addPatched stores a prepared project memory through the fast path,
// deduplicating against the index, which patch guarantees holds the file.
func (w *Workspace) addPatched(ctx context.Context, m memory.Memory) (memory.Added, error) {
	var out memory.Added
	err := w.patch(ctx, func(data []byte) ([][]byte, error) {
		have, found, err := w.store.FindContent(ctx, memory.ScopeProject, w.Repo.Root, m.Content)
		if err != nil || found {
			out = memory.Added{Memory: have, Existing: true}
			return nil, err
		}
		out = memory.Added{Memory: m}
		return insertLine(data, m)
	}, func() error {
		put, err := w.store.Put(ctx, m)
		out.Warning = put.Warning
		return err
	})
	return out, err
}

// removePatched removes project memories through the fast path.
func (w *Workspace) removePatched(ctx context.Context, ids []string) error {
	gone := make(map[string]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	return w.patch(ctx, func(data []byte) ([][]byte, error) {
		return removeLines(data, gone)
	}, func() error {
		_, err := w.store.Delete(ctx, w.vis, ids...)
		return err
	})
}

// replaceLine swaps the line of m's id for m's encoding.
func replaceLine(data []byte, m memory.Memory) ([][]byte, error) {
	var at, end int
	err := eachLine(data, func(start int, l []byte) bool {
		id, ok := lineID(l)
		if !ok {
			at, end = -1, -1
			return false
		}
		if id == m.ID {
			at, end = start, start+len(l)
			return false
		}
		return true
	})
	if err != nil || at <= 0 {
		return nil, errNotPatchable
	}
	return [][]byte{data[:at], encodeLine(toRecord(m)), data[end:]}, nil
}
