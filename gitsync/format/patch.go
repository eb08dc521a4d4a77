package format

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/memory"
)

// A write that adds, removes or edits a memory or two need not decode and
// re-encode the whole file: while the file is canonical, splicing the
// memory's line into its bytes gives exactly what Encode would
// (TestPatchLinesMatchTheCanonicalEncoding). The splices return the new
// content as parts to write in order, sharing data's memory.

// ErrNotPatchable means the file is not canonical where a splice would go
// (an id out of place, a line without the id first, no final newline):
// the caller rewrites the whole file instead, which is always correct.
var ErrNotPatchable = errors.New("memories file cannot be patched in place")

// idPrefix starts every canonical memory line: the id is the first key.
const idPrefix = `{"id":"`

// lineID returns the id of a canonical memory line.
func lineID(line []byte) (string, bool) {
	id, ok := lineIDBytes(line)
	return string(id), ok
}

// eachLine calls fn with the start offset and bytes (newline included) of
// every memory line after the header, stopping when fn returns false.
func eachLine(data []byte, fn func(start int, line []byte) bool) error {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return ErrNotPatchable
	}
	for start := nl + 1; start < len(data); {
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			return ErrNotPatchable // no trailing newline: not canonical
		}
		end += start + 1
		if !fn(start, data[start:end]) {
			return nil
		}
		start = end
	}
	return nil
}

// InsertLine adds the encoded memory m to a memories file in id order. New
// ids are time-ordered, so the place is almost always the end.
func InsertLine(data []byte, m memory.Memory) ([][]byte, error) {
	return Splice(data, nil, []memory.Memory{m})
}

// RemoveLines drops the lines of the memories with these ids. Every id must
// be found exactly once.
func RemoveLines(data []byte, ids map[string]bool) ([][]byte, error) {
	if parts, ok := spliceFound(data, ids, nil); ok {
		return parts, nil
	}
	return Splice(data, ids, nil)
}

// ReplaceLine swaps the line of m's id for m's encoding.
func ReplaceLine(data []byte, m memory.Memory) ([][]byte, error) {
	if parts, ok := spliceFound(data, map[string]bool{m.ID: true}, &m); ok {
		return parts, nil
	}
	return Splice(data, map[string]bool{m.ID: true}, []memory.Memory{m})
}

// maxFound is the most lines spliceFound looks up one by one; more are
// cheaper found in one pass (Splice).
const maxFound = 64

// spliceFound is Splice for removals, or the replacement of one line by a
// memory of the same id, in a canonical file: it finds each line by binary
// search over the lines in id order, reading about log2(n) of them, where
// Splice reads every line (at 100k memories, a tenth of a forget's time).
// It reports false when a line is not found, as it would not be in a file
// out of order, for the caller to splice the whole file instead.
func spliceFound(data []byte, remove map[string]bool, replace *memory.Memory) ([][]byte, bool) {
	if len(remove) == 0 || len(remove) > maxFound {
		return nil, false
	}
	header := bytes.IndexByte(data, '\n')
	if header < 0 || data[len(data)-1] != '\n' {
		return nil, false
	}
	type span struct{ start, end int }
	spans := make([]span, 0, len(remove))
	for id := range remove {
		start, end, ok := findLine(data, header+1, id)
		if !ok {
			return nil, false
		}
		spans = append(spans, span{start, end})
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	parts := make([][]byte, 0, 2*len(spans)+1)
	from := 0
	for _, sp := range spans {
		parts = append(parts, data[from:sp.start])
		if replace != nil {
			parts = append(parts, encodeRecord(*replace))
		}
		from = sp.end
	}
	return append(parts, data[from:]), true
}

// findLine returns where the line of id lies in data, whose memory lines
// start at first and, as in a canonical file, ascend by id.
func findLine(data []byte, first int, id string) (start, end int, ok bool) {
	lo, hi := first, len(data) // lo is a line's start; hi one's start or the end
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := lo + bytes.LastIndexByte(data[lo:mid], '\n') + 1
		end := start + bytes.IndexByte(data[start:], '\n') + 1
		lineID, ok := lineIDBytes(data[start:end])
		if !ok {
			return 0, 0, false
		}
		switch c := bytes.Compare(lineID, []byte(id)); {
		case c == 0:
			return start, end, true
		case c < 0:
			lo = end
		default:
			hi = start
		}
	}
	return 0, 0, false
}

// AppendLine returns m's line when it goes at the very end of a canonical
// file whose last line is last (newline included): m's id sorts after
// last's, as a new id, being time-ordered, almost always does. Otherwise it
// returns ErrNotPatchable and the caller splices or rewrites instead. A
// memory Decode would not read back is refused (CheckMemory).
func AppendLine(last []byte, m memory.Memory) ([]byte, error) {
	id, ok := lineID(last)
	if !ok || len(last) == 0 || last[len(last)-1] != '\n' || id >= m.ID {
		return nil, ErrNotPatchable
	}
	if err := CheckMemory(m); err != nil {
		return nil, err
	}
	return encodeRecord(m), nil
}

// LineChange is one memory line that differs between two canonical files:
// Old is nil for a memory only the new file holds.
type LineChange struct {
	Old, New []byte
}

// DiffLines compares two memories files line by line, walking both in id
// order, without decoding a line that did not change: what changed, the ids
// only old holds, and how many lines are the same. Either file out of
// canonical order, a header that differs or more than max changes returns
// ErrNotPatchable, for the caller to read the new file whole instead.
func DiffLines(old, new []byte, max int) (changes []LineChange, removed []string, same int, err error) {
	oh, orest, ok1 := bytes.Cut(old, []byte("\n"))
	nh, nrest, ok2 := bytes.Cut(new, []byte("\n"))
	if !ok1 || !ok2 || !bytes.Equal(oh, nh) {
		return nil, nil, 0, ErrNotPatchable
	}
	// Ids are compared in place: a copy of each would cost a large file
	// an allocation per line.
	next := func(rest []byte, prev []byte) (line []byte, id []byte, tail []byte, ok bool) {
		end := bytes.IndexByte(rest, '\n')
		if end < 0 {
			return nil, nil, nil, false
		}
		line = rest[:end+1]
		id, ok = lineIDBytes(line)
		return line, id, rest[end+1:], ok && bytes.Compare(id, prev) > 0
	}
	var oline, nline []byte
	var oid, nid []byte
	ok := true
	advanceOld := func() {
		if len(orest) == 0 {
			oline = nil
			return
		}
		var good bool
		oline, oid, orest, good = next(orest, oid)
		ok = ok && good
	}
	advanceNew := func() {
		if len(nrest) == 0 {
			nline = nil
			return
		}
		var good bool
		nline, nid, nrest, good = next(nrest, nid)
		ok = ok && good
	}
	advanceOld()
	advanceNew()
	for ok && (oline != nil || nline != nil) {
		switch {
		case nline == nil || oline != nil && bytes.Compare(oid, nid) < 0:
			removed = append(removed, string(oid))
			advanceOld()
		case oline == nil || bytes.Compare(nid, oid) < 0:
			changes = append(changes, LineChange{New: nline})
			advanceNew()
		default:
			if bytes.Equal(oline, nline) {
				same++
			} else {
				changes = append(changes, LineChange{Old: oline, New: nline})
			}
			advanceOld()
			advanceNew()
		}
		if len(changes)+len(removed) > max {
			return nil, nil, 0, ErrNotPatchable
		}
	}
	if !ok {
		return nil, nil, 0, ErrNotPatchable
	}
	return changes, removed, same, nil
}

// DecodeLine decodes one memory line (newline optional) as Decode does.
func DecodeLine(line []byte) (memory.Memory, error) {
	return decodeRecord(strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r"))
}

// CanonicalLine decodes one memory line (newline included) and reports
// whether it is exactly the line Encode writes for that memory: then a
// file of such lines in id order, after the header, is canonical, and a
// line can be checked without reading the rest of the file.
func CanonicalLine(line []byte) (memory.Memory, bool) {
	m, err := DecodeLine(line)
	if err != nil || CheckMemory(m) != nil {
		return memory.Memory{}, false
	}
	return m, bytes.Equal(encodeRecord(m), line)
}

// LinesByID returns the lines (newline included) of a memories file whose
// ids are in ids, reading no line whole but by its id. A line without the
// id first is ErrNotPatchable.
func LinesByID(data []byte, ids map[string]bool) (map[string][]byte, error) {
	out := make(map[string][]byte, len(ids))
	var bad bool
	err := eachLine(data, func(_ int, l []byte) bool {
		id, ok := lineIDBytes(l)
		if !ok {
			bad = true
			return false
		}
		if ids[string(id)] {
			out[string(id)] = l
		}
		return true
	})
	if err != nil || bad {
		return nil, ErrNotPatchable
	}
	return out, nil
}

// lineIDBytes is lineID without copying the id.
func lineIDBytes(line []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(idPrefix))
	if !ok {
		return nil, false
	}
	id, _, ok := bytes.Cut(rest, []byte(`"`))
	return id, ok
}

// Splice removes the lines of the ids in remove from a canonical memories
// file and puts the encoded memories of insert, sorted by id, in their
// places: what Encode gives for the file's memories changed so, as parts
// to write in order. Every id in remove must be found, and no inserted id
// may be left on a line that stays; otherwise it is ErrNotPatchable.
func Splice(data []byte, remove map[string]bool, insert []memory.Memory) ([][]byte, error) {
	for i := 1; i < len(insert); i++ {
		if insert[i-1].ID >= insert[i].ID {
			return nil, ErrNotPatchable
		}
	}
	out := [][]byte{}
	from, found, next := 0, 0, 0
	bad := false
	err := eachLine(data, func(start int, l []byte) bool {
		id, ok := lineIDBytes(l)
		if !ok {
			bad = true
			return false
		}
		for next < len(insert) && insert[next].ID <= string(id) {
			if insert[next].ID == string(id) && !remove[insert[next].ID] {
				bad = true // the id would be on two lines
				return false
			}
			out = append(out, data[from:start], encodeRecord(insert[next]))
			from = start
			next++
		}
		if remove[string(id)] {
			found++
			out = append(out, data[from:start])
			from = start + len(l)
		}
		return true
	})
	if err != nil || bad || found != len(remove) {
		return nil, ErrNotPatchable
	}
	out = append(out, data[from:])
	for _, m := range insert[next:] {
		out = append(out, encodeRecord(m))
	}
	return out, nil
}

// Line is m's line in a canonical file, LF included: what the splices put
// in the file for m.
func Line(m memory.Memory) []byte { return encodeRecord(m) }

// LineID returns the id of a canonical memory line, which comes first.
func LineID(line []byte) (string, bool) { return lineID(line) }
