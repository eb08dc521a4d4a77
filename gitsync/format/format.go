// Package format is the .acolyte/memories.jsonl file format: the canonical
// encoding that is the truth for project memory, the decoder that also reads
// what a merge without acolyte's driver leaves, the merge driver's
// three-way merge by memory id, and the atomic write of the file. It knows
// nothing of git or of the index, so that the merge driver, `acolyte
// check` and gitsync all read and write the file the same way; gitsync
// builds the workspace, hooks and derivation on top of it.
package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/memory"
)

// Paths inside a repository, relative to its worktree root.
const (
	Dir          = ".acolyte"
	MemoriesFile = "memories.jsonl"
)

// Version is the version of memories.jsonl this acolyte writes and the
// newest it reads.
const Version = 1

// timeLayout is the only timestamp form in the file: UTC with milliseconds,
// which is the precision of ULIDs, so ids and timestamps agree on ordering.
const timeLayout = "2006-01-02T15:04:05.000Z"

// Errors callers can test for with errors.Is.
var (
	ErrConflictMarkers = errors.New("unresolved git merge conflict")
	ErrVersionTooNew   = errors.New("file format is newer than this acolyte")
	ErrInvalidFile     = errors.New("invalid memories file")
)

// LineError places a problem at a line of a file, so that the message says
// exactly where to look.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string {
	file := e.File
	if file == "" {
		file = MemoriesFile
	}
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", file, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", file, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// header is the first line of the file. Its field order is the key order.
type header struct {
	Acolyte string `json:"acolyte"`
	Version int    `json:"version"`
}

// record is one memory line. Its field order is the canonical key order. The
// scope is implied (every memory in the file is a project memory) and the
// scope key, embedding and recall time are machine-local, so none is here.
type record struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	Content string   `json:"content"`
	Topic   string   `json:"topic,omitempty"`
	Source  string   `json:"source,omitempty"`
	Created string   `json:"created,omitempty"`
	Updated string   `json:"updated,omitempty"`
	Commit  string   `json:"commit,omitempty"`
	Paths   []string `json:"paths,omitempty"`
	// Globs is last and optional, so that a file whose memories carry
	// none reads and encodes exactly as before it existed.
	Globs []string `json:"globs,omitempty"`
}

// Encode renders memories in the canonical form: a header line, then one
// memory per line sorted by id, LF endings and a trailing newline. Equal sets
// of memories always encode to equal bytes, which is what lets git diff and
// merge the file and lets `acolyte check` compare clones.
func Encode(mems []memory.Memory) []byte {
	sorted := slices.Clone(mems)
	slices.SortStableFunc(sorted, func(a, b memory.Memory) int { return strings.Compare(a.ID, b.ID) })
	buf := encodeLine(header{Acolyte: "memories", Version: Version})
	for _, m := range sorted {
		buf = appendMemory(buf, m)
	}
	return buf
}

// EncodeKeeping is Encode(mems) followed by lines, each as it was: the
// lines a file held that are not valid memories (Decoded.InvalidLines),
// which a write keeps after the valid ones instead of refusing or dropping
// them.
func EncodeKeeping(mems []memory.Memory, lines []string) []byte {
	buf := Encode(mems)
	for _, l := range lines {
		buf = append(append(buf, l...), '\n')
	}
	return buf
}

// encodeRecord is m's line in the file, LF included.
func encodeRecord(m memory.Memory) []byte {
	return appendMemory(nil, m)
}

// encodeLine marshals without HTML escaping so that <, > and & stay readable
// in diffs; json.Encoder ends every value with the LF the format wants.
func encodeLine(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only strings, ints and string slices are encoded, which cannot fail.
		panic(fmt.Sprintf("gitsync: encoding %T: %v", v, err))
	}
	return buf.Bytes()
}

func toRecord(m memory.Memory) record {
	var paths []string
	if len(m.Paths) > 0 {
		paths = slices.Clone(m.Paths)
		slices.Sort(paths)
		paths = slices.Compact(paths)
	}
	return record{
		ID:      m.ID,
		Kind:    string(m.Kind),
		Content: m.Content,
		Topic:   m.Topic,
		Source:  m.Source,
		Created: formatTime(m.CreatedAt),
		Updated: formatTime(m.UpdatedAt),
		Commit:  m.Commit,
		Paths:   paths,
		Globs:   memory.NormalizeGlobs(m.Globs),
	}
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC().Truncate(time.Millisecond)
	if y := t.Year(); y < 0 || y > 9999 {
		// Never written (CheckMemory refuses it), but described in messages.
		return t.Format(timeLayout)
	}
	return string(appendTime(nil, t))
}

// Decode parses a memories file. Empty data is an empty file. Every memory
// comes back with scope project and no scope key: the caller knows which
// project it read. file names the file in error messages.
//
// Decode reads what a merge without acolyte's merge driver leaves (git's
// union driver, a rebase, a clean textual merge): lines in any order, and
// the same id on more than one line, which it resolves as the merge driver
// would (see Merge). DecodeAll says which lines it dropped doing so. A line
// that is not a valid memory fails the whole decode, so that a writer never
// rewrites the file without it; readers that can go on without it use
// DecodeAll.
func Decode(file string, data []byte) ([]memory.Memory, error) {
	d, err := DecodeAll(file, data)
	if err != nil {
		return nil, err
	}
	if len(d.Invalid) > 0 {
		return nil, d.Invalid[0]
	}
	return d.Memories, nil
}

// Decoded is what DecodeAll read from a memories file.
type Decoded struct {
	// Memories holds one memory per id, in file order.
	Memories []memory.Memory
	// Duplicates places each line dropped because its id is on another
	// line with different contents, and says which line was kept: the next
	// write of the file drops the others.
	Duplicates []*LineError
	// Invalid holds the lines that are not valid memories, each with its
	// line number and a fix; they are not in Memories.
	Invalid []*LineError
	// InvalidLines are those lines' text, in the same order, for a writer
	// to keep (EncodeKeeping): one bad line must not block writing the
	// other memories, and nothing of it may be lost.
	InvalidLines []string
}

// Warnings is every problem DecodeAll worked around, one line each, for a
// reader that goes on without stopping.
func (d Decoded) Warnings() []string {
	var out []string
	for _, le := range d.Duplicates {
		out = append(out, le.Error())
	}
	for _, le := range d.Invalid {
		out = append(out, le.Error()+"; the line is left out of search until it is fixed, and writes keep it at the end of the file")
	}
	return out
}

// DecodeAll parses a memories file as far as it can. It fails only when the
// file as a whole cannot be read: conflict markers, or a missing, malformed
// or too new header. Each line that is not a valid memory is reported in
// Invalid and skipped, so that one bad line does not hide the others.
func DecodeAll(file string, data []byte) (Decoded, error) {
	var d Decoded
	if len(data) == 0 {
		return d, nil
	}
	// CheckWhole's checks, the header read from the split lines rather
	// than copied out of data: an allocation a file.
	if err := findConflictMarkers(file, data); err != nil {
		return d, err
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if err := decodeHeader(lines[0]); err != nil {
		return d, &LineError{file, 1, err}
	}
	// Lines are decoded in parallel into their own slots, then resolved in
	// file order in place: d.Memories reuses the slots, so a large file
	// costs no second slice of memories.
	parsed, errs := decodeLines(lines[1:])
	d.Memories = parsed[:0]
	type place struct{ index, line int } // in d.Memories and in the file
	// While ids ascend, as in a canonical file, each is new and no map of
	// them is needed; the first id that does not builds it from the lines
	// before, each of which added one memory.
	var seen map[string]place
	index := func(upTo int) {
		seen = make(map[string]place, len(lines)-1)
		k := 0
		for j := range upTo {
			if errs[j] == nil {
				seen[d.Memories[k].ID] = place{k, j + 2}
				k++
			}
		}
	}
	for i, line := range lines[1:] {
		lineNo := i + 2
		m, err := parsed[i], errs[i]
		if err == errBlankLine {
			continue
		}
		if err != nil {
			d.Invalid = append(d.Invalid, &LineError{file, lineNo, fmt.Errorf("%w; fix or delete the line by hand (git log -p %s shows where it came from), then run `acolyte sync`", err, Dir+"/"+MemoriesFile)})
			d.InvalidLines = append(d.InvalidLines, strings.TrimSuffix(line, "\r"))
			continue
		}
		if seen == nil {
			if n := len(d.Memories); n == 0 || d.Memories[n-1].ID < m.ID {
				d.Memories = append(d.Memories, m)
				continue
			}
			index(i)
		}
		p, dup := seen[m.ID]
		if !dup {
			seen[m.ID] = place{len(d.Memories), lineNo}
			d.Memories = append(d.Memories, m)
			continue
		}
		prev := d.Memories[p.index]
		if Same(prev, m) {
			continue
		}
		winner, _ := pickLater(prev, m)
		keptLine, droppedLine, dropped := p.line, lineNo, m
		if Same(winner, m) {
			keptLine, droppedLine, dropped = lineNo, p.line, prev
			d.Memories[p.index] = m
			seen[m.ID] = place{p.index, lineNo}
		}
		d.Duplicates = append(d.Duplicates, &LineError{file, droppedLine, fmt.Errorf("id %s is also on line %d, as after a merge without acolyte's merge driver; "+
			"line %d is kept, as the merge driver would (the later update wins), and rewriting the file (`acolyte sync`) drops this line %s",
			safeID(m.ID), keptLine, keptLine, preview(dropped))})
	}
	return d, nil
}

// errBlankLine marks a line that holds no memory, which Decode skips.
var errBlankLine = errors.New("blank line")

// decodeLines decodes each line into its slot, on every CPU for a large
// file: decoding is most of what reading one costs, and lines are
// independent until their ids are compared.
func decodeLines(lines []string) ([]memory.Memory, []error) {
	mems := make([]memory.Memory, len(lines))
	errs := make([]error, len(lines))
	decode := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			line := strings.TrimSuffix(lines[i], "\r")
			if strings.TrimSpace(line) == "" {
				errs[i] = errBlankLine
				continue
			}
			mems[i], errs[i] = decodeRecord(line)
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if len(lines) < 10_000 || workers < 2 {
		decode(0, len(lines))
		return mems, errs
	}
	var wg sync.WaitGroup
	chunk := (len(lines) + workers - 1) / workers
	for lo := 0; lo < len(lines); lo += chunk {
		hi := min(lo+chunk, len(lines))
		wg.Go(func() { decode(lo, hi) })
	}
	wg.Wait()
	return mems, errs
}

// preview names a memory in a message; Describe withholds a secret.
func preview(m memory.Memory) string { return Describe(m) }

// CheckMemory validates m exactly as Decode will when it reads the line
// back, so that nothing written to the file can make it unreadable.
func CheckMemory(m memory.Memory) error {
	// encoding/json would write invalid UTF-8 as U+FFFD, changing the
	// memory without a word; refuse it instead.
	for _, f := range append(append([]string{m.ID, m.Content, m.Topic, m.Source, m.Commit}, m.Paths...), m.Globs...) {
		if !utf8.ValidString(f) {
			return fmt.Errorf("memory %s: %w: a field contains invalid UTF-8", m.ID, memory.ErrInvalidText)
		}
	}
	line := strings.TrimSuffix(string(encodeRecord(m)), "\n")
	if _, err := decodeRecord(line); err != nil {
		if m.ID != "" && !strings.Contains(err.Error(), m.ID) {
			return fmt.Errorf("memory %s: %w", m.ID, err)
		}
		return err
	}
	return nil
}

// conflictMarkers are the line prefixes git writes around a conflict (the
// ||||||| one only with merge.conflictStyle=diff3).
// CheckWhole is the error DecodeAll fails with on data, without decoding
// a memory: conflict markers, or a missing, malformed or too new header
// (DecodeAll makes the same two checks). It is nil for empty data, which
// DecodeAll reads as no memories.
func CheckWhole(file string, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if err := findConflictMarkers(file, data); err != nil {
		return err
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if err := decodeHeader(string(first)); err != nil {
		return &LineError{file, 1, err}
	}
	return nil
}

// IsConflictMarker reports whether line (without its newline) is one of
// git's conflict markers, as DecodeAll finds them.
func IsConflictMarker(line []byte) bool {
	for _, marker := range conflictMarkers {
		if bytes.HasPrefix(line, []byte(marker)) {
			return true
		}
	}
	return false
}

var conflictMarkers = []string{"<<<<<<<", "|||||||", "=======", ">>>>>>>"}

func findConflictMarkers(file string, data []byte) error {
	// Line by line without splitting: a large file is not copied for this.
	for i := 0; len(data) > 0; i++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		for _, marker := range conflictMarkers {
			if bytes.HasPrefix(line, []byte(marker)) {
				return &LineError{file, i + 1, fmt.Errorf("%w (a %q line): resolve it by hand, or keep one side with "+
					"`git checkout --ours %s` or `git checkout --theirs %s` and then run `acolyte sync`; "+
					"`acolyte hooks install` configures the acolyte merge driver so that branches merge without conflicts",
					ErrConflictMarkers, marker, Dir+"/"+MemoriesFile, Dir+"/"+MemoriesFile)}
			}
		}
	}
	return nil
}

func decodeHeader(line string) error {
	var h header
	dec := json.NewDecoder(strings.NewReader(line))
	if err := dec.Decode(&h); err != nil || h.Acolyte != "memories" {
		return fmt.Errorf("%w: the first line must be the header %s", ErrInvalidFile, strings.TrimSpace(string(encodeLine(header{"memories", Version}))))
	}
	switch {
	case h.Version > Version:
		return fmt.Errorf("%w: it is version %d and this acolyte reads up to version %d; upgrade acolyte", ErrVersionTooNew, h.Version, Version)
	case h.Version < 1:
		return fmt.Errorf("%w: version %d does not exist; the header must be %s", ErrInvalidFile, h.Version, strings.TrimSpace(string(encodeLine(header{"memories", Version}))))
	}
	return nil
}

func decodeRecord(line string) (memory.Memory, error) {
	r, ok := parseCanonical(line)
	if !ok {
		var err error
		if r, err = decodeJSON(line); err != nil {
			return memory.Memory{}, err
		}
	}
	if err := validateID(r.ID); err != nil {
		return memory.Memory{}, err
	}
	kind, err := memory.ParseKind(r.Kind)
	if err != nil {
		return memory.Memory{}, fmt.Errorf("memory %s: %w", r.ID, err)
	}
	m := memory.Memory{
		ID:      r.ID,
		Scope:   memory.ScopeProject,
		Kind:    kind,
		Content: r.Content,
		Topic:   r.Topic,
		Source:  r.Source,
		Commit:  r.Commit,
		Paths:   r.Paths,
		Globs:   r.Globs,
	}
	if m.CreatedAt, err = parseTime("created", r.Created); err != nil {
		return memory.Memory{}, fmt.Errorf("memory %s: %w", r.ID, err)
	}
	if m.UpdatedAt, err = parseTime("updated", r.Updated); err != nil {
		return memory.Memory{}, fmt.Errorf("memory %s: %w", r.ID, err)
	}
	// Validate wants the scope key every project memory has once loaded,
	// which only the caller knows; any non-empty key stands in for it.
	check := m
	check.ScopeKey = Dir
	if err := check.Validate(); err != nil {
		return memory.Memory{}, fmt.Errorf("memory %s: %w", r.ID, err)
	}
	return m, nil
}

// decodeJSON reads a record line strictly: no unknown key, one value.
func decodeJSON(line string) (record, error) {
	var r record
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return record{}, fmt.Errorf("%w: malformed JSON: %v", ErrInvalidFile, err)
	}
	if dec.More() {
		return record{}, fmt.Errorf("%w: more than one JSON value on the line; each memory goes on its own line", ErrInvalidFile)
	}
	return r, nil
}

func validateID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: the memory has no id", ErrInvalidFile)
	}
	if len(id) > 64 {
		return fmt.Errorf("%w: id %.20q… is longer than 64 characters", ErrInvalidFile, safeID(id))
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return fmt.Errorf("%w: id %q may contain only letters, digits, - and _", ErrInvalidFile, safeID(id))
		}
	}
	return nil
}

func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, ok := parseLayoutTime(s); ok {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s time %q is not RFC 3339 (like 2025-01-31T12:00:00.000Z)", ErrInvalidFile, field, s)
	}
	// The file keeps milliseconds in UTC with a four-digit year; a time it
	// cannot write back that way would make the next write unreadable.
	t = t.UTC().Truncate(time.Millisecond)
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("%w: %s time %q is outside the years 0000 to 9999 in UTC", ErrInvalidFile, field, s)
	}
	return t, nil
}

// parseLayoutTime reads a time written in timeLayout, the only form the
// file's writer uses, without time.Parse's general RFC 3339 reader, which
// was a twentieth of what checking a large file cost. ok is false for
// anything else, valid or not, which parseTime then reads in full;
// FuzzParseLayoutTime holds the two to the same times.
func parseLayoutTime(s string) (t time.Time, ok bool) {
	if len(s) != len(timeLayout) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return time.Time{}, false
	}
	num := func(from, to int) int {
		n := 0
		for i := from; i < to; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(0, 4), num(5, 7), num(8, 10)
	hour, minute, sec, ms := num(11, 13), num(14, 16), num(17, 19), num(20, 23)
	if year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
		sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	t = time.Date(year, time.Month(month), day, hour, minute, sec, ms*int(time.Millisecond), time.UTC)
	if t.Day() != day { // the 31st of a shorter month, which time.Date moves on
		return time.Time{}, false
	}
	return t, true
}
