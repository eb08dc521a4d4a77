package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// Forgetting a project memory must outlast a merge that does not run
// acolyte's merge driver: git's union merge keeps every line of both sides
// where they touch neighbouring lines, so a line one branch deleted comes
// back when the other branch appended next to it. A deletion is therefore
// also written as an addition, a tombstone in ForgottenFile, which a union
// merge keeps like any added line; every reader of the memories file hides
// the memories the tombstones cover.
//
// Tombstones live in a file of their own, not in memories.jsonl, because
// `git revert` of a forget is a three-way merge too: in one file the revert's
// restored memory line and the tombstone it should remove touch the lines a
// later commit appended, and a union merge would keep both, leaving the memory
// forgotten. Apart, the tombstone's removal is a clean hunk of its own file.
//
// A tombstone covers the version it forgot and every earlier one, not
// later ones: an edit on another branch moves "updated" past the version this
// branch forgot, so the edit survives, as the merge driver keeps an edit over
// a deletion. The merge driver and a union merge thereby agree: whichever of
// them merged memories.jsonl, applying the union of both sides' tombstones
// gives the same memories.

// ForgottenFile is the tombstone file beside MemoriesFile. Every line is
// one tombstone (there is no header, so that two branches that each create
// the file merge without a duplicated first line), sorted by forgetting
// time and then id, so that new tombstones append and compaction removes
// from the top: two branches forgetting merge as two appended hunks.
const ForgottenFile = "forgotten.jsonl"

// TombstoneTTL is how long a tombstone is kept. A branch that still holds a
// memory forgotten longer ago than this and is merged without the merge
// driver brings it back; three months outlives ordinary branches, and the
// file stays small.
const TombstoneTTL = 90 * 24 * time.Hour

// Tombstone records that a project memory was forgotten.
type Tombstone struct {
	ID string
	// Updated is the "updated" time of the version that was forgotten: the
	// tombstone covers that version and earlier ones.
	Updated time.Time
	// Forgotten is when it was forgotten, which compaction goes by.
	Forgotten time.Time
}

// tombRecord is one line of ForgottenFile; its field order is the key order.
type tombRecord struct {
	ID        string `json:"id"`
	Updated   string `json:"updated,omitempty"`
	Forgotten string `json:"forgotten"`
}

// ForgottenPath is where a worktree keeps its tombstones.
func ForgottenPath(root string) string {
	return filepath.Join(root, Dir, ForgottenFile)
}

// Covers reports whether t hides m: same id, and m is not newer than the
// version t forgot.
func (t Tombstone) Covers(m memory.Memory) bool {
	return t.ID == m.ID && !m.UpdatedAt.After(t.Updated)
}

// TombstoneFor is the tombstone forgetting m at now.
func TombstoneFor(m memory.Memory, now time.Time) Tombstone {
	return Tombstone{ID: m.ID, Updated: m.UpdatedAt.UTC().Truncate(time.Millisecond), Forgotten: now.UTC().Truncate(time.Millisecond)}
}

// EncodeForgotten renders tombstones canonically: one per id (the one
// covering most), sorted by forgetting time, then id. No tombstones encode
// as no bytes, and a writer removes the file then.
func EncodeForgotten(ts []Tombstone) []byte {
	ts = dedupeTombstones(ts)
	slices.SortFunc(ts, func(a, b Tombstone) int {
		if c := a.Forgotten.Compare(b.Forgotten); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	var buf bytes.Buffer
	for _, t := range ts {
		buf.Write(encodeLine(tombRecord{ID: t.ID, Updated: formatTime(t.Updated), Forgotten: formatTime(t.Forgotten)}))
	}
	return buf.Bytes()
}

// dedupeTombstones keeps, of the tombstones of one id (a union merge of two
// branches that forgot the same memory), the one covering the latest
// version, and of those the latest forgetting.
func dedupeTombstones(ts []Tombstone) []Tombstone {
	byID := make(map[string]Tombstone, len(ts))
	for _, t := range ts {
		have, ok := byID[t.ID]
		if !ok || t.Updated.After(have.Updated) || t.Updated.Equal(have.Updated) && t.Forgotten.After(have.Forgotten) {
			byID[t.ID] = t
		}
	}
	out := make([]Tombstone, 0, len(byID))
	for _, t := range byID {
		out = append(out, t)
	}
	return out
}

// DecodeForgotten parses a tombstone file. Lines in any order and an id on
// several lines, as a union merge leaves them, are read (EncodeForgotten
// makes them canonical). It fails only on conflict markers; a line that is
// not a tombstone is returned in invalid and left out, so that readers warn
// and go on, and writers refuse to drop it.
func DecodeForgotten(file string, data []byte) (ts []Tombstone, invalid []*LineError, err error) {
	if len(data) == 0 {
		return nil, nil, nil
	}
	if err := findConflictMarkers(file, data); err != nil {
		return nil, nil, err
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		t, err := decodeTombstone(line)
		if err != nil {
			invalid = append(invalid, &LineError{file, i + 1, fmt.Errorf("%w; fix or delete the line by hand (git log -p %s shows where it came from), then run `acolyte sync`", err, Dir+"/"+ForgottenFile)})
			continue
		}
		ts = append(ts, t)
	}
	return ts, invalid, nil
}

func decodeTombstone(line string) (Tombstone, error) {
	var r tombRecord
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Tombstone{}, fmt.Errorf("%w: malformed tombstone: %v", ErrInvalidFile, err)
	}
	if dec.More() {
		return Tombstone{}, fmt.Errorf("%w: more than one JSON value on the line; each tombstone goes on its own line", ErrInvalidFile)
	}
	if err := validateID(r.ID); err != nil {
		return Tombstone{}, err
	}
	var t Tombstone
	var err error
	t.ID = r.ID
	if t.Updated, err = parseTime("updated", r.Updated); err != nil {
		return Tombstone{}, fmt.Errorf("tombstone %s: %w", r.ID, err)
	}
	if r.Forgotten == "" {
		return Tombstone{}, fmt.Errorf("%w: tombstone %s has no forgotten time", ErrInvalidFile, r.ID)
	}
	if t.Forgotten, err = parseTime("forgotten", r.Forgotten); err != nil {
		return Tombstone{}, fmt.Errorf("tombstone %s: %w", r.ID, err)
	}
	return t, nil
}

// Forget splits mems into the memories no tombstone covers and those one
// does, each in mems' order.
func Forget(mems []memory.Memory, ts []Tombstone) (kept, forgotten []memory.Memory) {
	if len(ts) == 0 {
		return mems, nil
	}
	byID := make(map[string]Tombstone, len(ts))
	for _, t := range dedupeTombstones(ts) {
		byID[t.ID] = t
	}
	kept = make([]memory.Memory, 0, len(mems))
	for _, m := range mems {
		if t, ok := byID[m.ID]; ok && t.Covers(m) {
			forgotten = append(forgotten, m)
			continue
		}
		kept = append(kept, m)
	}
	return kept, forgotten
}

// Compact drops the tombstones forgotten more than TombstoneTTL before now,
// except those still covering a line of the memories file (inFile holds its
// ids), which would bring that memory back.
func Compact(ts []Tombstone, inFile map[string]bool, now time.Time) []Tombstone {
	return slices.DeleteFunc(slices.Clone(ts), func(t Tombstone) bool {
		return now.Sub(t.Forgotten) > TombstoneTTL && !inFile[t.ID]
	})
}

// WriteForgotten replaces the tombstone file with ts, atomically; no
// tombstones remove it.
func WriteForgotten(root string, ts []Tombstone) error {
	data := EncodeForgotten(ts)
	path := ForgottenPath(root)
	if len(data) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", path, err)
		}
		return nil
	}
	return writeAtomic(path, data)
}
