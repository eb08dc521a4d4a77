package gitsync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// Paths inside a repository, relative to its worktree root.
const (
	Dir          = ".acolyte"
	MemoriesFile = "memories.jsonl"
	SeedsFile    = "seeds.json"
)

// FormatVersion is the version of memories.jsonl this acolyte writes and the
// newest it reads.
const FormatVersion = 1

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
}

// Encode renders memories in the canonical form: a header line, then one
// memory per line sorted by id, LF endings and a trailing newline. Equal sets
// of memories always encode to equal bytes, which is what lets git diff and
// merge the file and lets `acolyte check` compare clones.
func Encode(mems []memory.Memory) []byte {
	sorted := slices.Clone(mems)
	slices.SortStableFunc(sorted, func(a, b memory.Memory) int { return strings.Compare(a.ID, b.ID) })
	var buf bytes.Buffer
	buf.Write(encodeLine(header{Acolyte: "memories", Version: FormatVersion}))
	for _, m := range sorted {
		buf.Write(encodeLine(toRecord(m)))
	}
	return buf.Bytes()
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
	}
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Truncate(time.Millisecond).Format(timeLayout)
}

// Decode parses a memories file. Empty data is an empty file. Every memory
// comes back with scope project and no scope key: the caller knows which
// project it read. file names the file in error messages.
func Decode(file string, data []byte) ([]memory.Memory, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if err := findConflictMarkers(file, data); err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if err := decodeHeader(lines[0]); err != nil {
		return nil, &LineError{file, 1, err}
	}
	mems := make([]memory.Memory, 0, len(lines)-1)
	firstLine := make(map[string]int, len(lines)-1)
	for i, line := range lines[1:] {
		lineNo := i + 2
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := decodeRecord(line)
		if err != nil {
			return nil, &LineError{file, lineNo, err}
		}
		if prev, dup := firstLine[m.ID]; dup {
			return nil, &LineError{file, lineNo, fmt.Errorf("%w: id %s is already used on line %d; remove one of the two lines", ErrInvalidFile, m.ID, prev)}
		}
		firstLine[m.ID] = lineNo
		mems = append(mems, m)
	}
	return mems, nil
}

// conflictMarkers are the line prefixes git writes around a conflict (the
// ||||||| one only with merge.conflictStyle=diff3).
var conflictMarkers = []string{"<<<<<<<", "|||||||", "=======", ">>>>>>>"}

func findConflictMarkers(file string, data []byte) error {
	for i, line := range strings.Split(string(data), "\n") {
		for _, marker := range conflictMarkers {
			if strings.HasPrefix(line, marker) {
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
		return fmt.Errorf("%w: the first line must be the header %s", ErrInvalidFile, strings.TrimSpace(string(encodeLine(header{"memories", FormatVersion}))))
	}
	switch {
	case h.Version > FormatVersion:
		return fmt.Errorf("%w: it is version %d and this acolyte reads up to version %d; upgrade acolyte", ErrVersionTooNew, h.Version, FormatVersion)
	case h.Version < 1:
		return fmt.Errorf("%w: version %d does not exist; the header must be %s", ErrInvalidFile, h.Version, strings.TrimSpace(string(encodeLine(header{"memories", FormatVersion}))))
	}
	return nil
}

func decodeRecord(line string) (memory.Memory, error) {
	var r record
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return memory.Memory{}, fmt.Errorf("%w: malformed JSON: %v", ErrInvalidFile, err)
	}
	if dec.More() {
		return memory.Memory{}, fmt.Errorf("%w: more than one JSON value on the line; each memory goes on its own line", ErrInvalidFile)
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

func validateID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: the memory has no id", ErrInvalidFile)
	}
	if len(id) > 64 {
		return fmt.Errorf("%w: id %.20q… is longer than 64 characters", ErrInvalidFile, id)
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return fmt.Errorf("%w: id %q may contain only letters, digits, - and _", ErrInvalidFile, id)
		}
	}
	return nil
}

func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s time %q is not RFC 3339 (like 2025-01-31T12:00:00.000Z)", ErrInvalidFile, field, s)
	}
	return t.UTC(), nil
}
