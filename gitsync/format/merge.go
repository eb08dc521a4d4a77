package format

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/internal/atomicfile"
	"github.com/acolyte-dev/acolyte/internal/secrets"
	"github.com/acolyte-dev/acolyte/memory"
)

// Merge merges three versions of memories.jsonl by memory id, as git's merge
// driver: memories added on either side are kept, a memory deleted on one
// side and untouched on the other is deleted, and every other disagreement
// is resolved deterministically and described in report:
//   - edited on both sides: the later "updated" wins (a missing one counts
//     as earliest); on a tie the larger content in byte order, then the
//     larger encoded line, so both merge directions agree (pickLater);
//   - edited on one side and deleted on the other: the edit is kept, because
//     losing a deliberate change is worse than keeping a memory someone can
//     remove again.
//
// An id found on two lines of one input (left by a merge without this
// driver) is resolved by the same rule first, and reported. A memory added
// or changed on either side since base that looks like a credential is left
// out of the result and reported by id and kind of secret, never by its
// text: it stays in the history of the branch that added it, but the merge
// does not spread it to the other (rotate it either way). One already in
// base was on both branches before the merge; `acolyte check` reports it.
//
// base is empty when both branches created the file. The output is
// canonical. Inputs with conflict markers or invalid lines are refused.
func Merge(base, ours, theirs []byte) (merged []byte, report []string, err error) {
	var sets [3][]memory.Memory
	for i, in := range []struct {
		name string
		data []byte
	}{{"base", base}, {"ours", ours}, {"theirs", theirs}} {
		d, err := DecodeAll(in.name, in.data)
		if err == nil && len(d.Invalid) > 0 {
			err = d.Invalid[0]
		}
		if err != nil {
			return nil, nil, fmt.Errorf("merging: %w", err)
		}
		sets[i] = d.Memories
		if i > 0 {
			// Only the sides' duplicates reach the result; base's do not.
			for _, le := range d.Duplicates {
				report = append(report, le.Error())
			}
		}
	}
	b, o, t := sets[0], sets[1], sets[2]
	baseByID, oursByID, theirsByID := indexByID(b), indexByID(o), indexByID(t)
	var ids []string
	for _, set := range []map[string]memory.Memory{baseByID, oursByID, theirsByID} {
		for id := range set {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)

	var out []memory.Memory
	for _, id := range ids {
		bm, inBase := baseByID[id]
		om, inOurs := oursByID[id]
		tm, inTheirs := theirsByID[id]
		switch {
		case inOurs && inTheirs:
			switch {
			case Same(om, tm), inBase && Same(tm, bm):
				out = append(out, om)
			case inBase && Same(om, bm):
				out = append(out, tm)
			default:
				winner, side := pickLater(om, tm)
				out = append(out, winner)
				verb := "edited on both sides"
				if !inBase {
					verb = "added differently on both sides"
				}
				report = append(report, fmt.Sprintf("%s: %s; kept %s version (%s)", safeID(id), verb, side, Describe(winner)))
			}
		case inOurs:
			switch {
			case !inBase:
				out = append(out, om)
			case !Same(om, bm):
				out = append(out, om)
				report = append(report, fmt.Sprintf("%s: deleted on their side but edited on ours; kept our edit (%s)", safeID(id), Describe(om)))
			}
		case inTheirs:
			switch {
			case !inBase:
				out = append(out, tm)
			case !Same(tm, bm):
				out = append(out, tm)
				report = append(report, fmt.Sprintf("%s: deleted on our side but edited on theirs; kept their edit (%s)", safeID(id), Describe(tm)))
			}
		}
	}
	kept := out[:0]
	for _, m := range out {
		// Only what a side added or changed since base can be spread by
		// this merge; skipping the rest keeps the scan off the common case.
		if bm, inBase := baseByID[m.ID]; inBase && Same(m, bm) {
			kept = append(kept, m)
			continue
		}
		if sec, found := FindSecret(m); found {
			report = append(report, fmt.Sprintf("%s: left out of the merge because %s; rotate that credential "+
				"(the memory is still in the history of the branch that added it)", sec.Name(m, "added on one side"), sec))
			continue
		}
		kept = append(kept, m)
	}
	return Encode(kept), report, nil
}

func indexByID(mems []memory.Memory) map[string]memory.Memory {
	byID := make(map[string]memory.Memory, len(mems))
	for _, m := range mems {
		byID[m.ID] = m
	}
	return byID
}

// Same reports whether a and b are the same memory as the file stores
// them: equal encoded lines.
func Same(a, b memory.Memory) bool {
	// Equal fields encode equally; comparing them first spares a check of a
	// large file two encodings per unchanged memory. Unequal fields may
	// still encode equally (paths in another order, times a microsecond
	// apart), which only the encodings tell.
	if a.ID == b.ID && a.Kind == b.Kind && a.Content == b.Content && a.Topic == b.Topic && a.Source == b.Source &&
		a.Commit == b.Commit && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) && slices.Equal(a.Paths, b.Paths) &&
		slices.Equal(a.Globs, b.Globs) {
		return true
	}
	return bytes.Equal(encodeRecord(a), encodeRecord(b))
}

func pickLater(ours, theirs memory.Memory) (memory.Memory, string) {
	if c := ours.UpdatedAt.Compare(theirs.UpdatedAt); c != 0 {
		if c > 0 {
			return ours, "our"
		}
		return theirs, "their"
	}
	if c := strings.Compare(ours.Content, theirs.Content); c != 0 {
		if c > 0 {
			return ours, "our"
		}
		return theirs, "their"
	}
	if bytes.Compare(encodeRecord(ours), encodeRecord(theirs)) >= 0 {
		return ours, "our"
	}
	return theirs, "their"
}

// safeID is id for a message, unless the id itself looks like a
// credential (a whole token is a valid id), which no message may repeat.
func safeID(id string) string {
	if what, found := secrets.Detect(id); found {
		return "(an id withheld: it contains " + what + ")"
	}
	return id
}

// Describe names a memory in one short line for reports and diffs: its
// first line, quoted and cut at 72 bytes, or, for a memory holding a
// secret in any field, where the secret is instead.
func Describe(m memory.Memory) string {
	if sec, found := FindSecret(m); found {
		return "(withheld: " + sec.String() + ")"
	}
	first, _, multi := strings.Cut(m.Content, "\n")
	const max = 72
	if len(first) > max {
		first = first[:max]
		for !utf8.ValidString(first) {
			first = first[:len(first)-1]
		}
		multi = true
	}
	if multi {
		first += " …"
	}
	return fmt.Sprintf("%q", first)
}

// MergeFiles runs the merge driver on files, as git invokes it with
// %O %A %B: it merges base, ours and theirs and writes the result over ours.
// On error ours is left untouched and git records a conflict.
func MergeFiles(basePath, oursPath, theirsPath string) (report []string, err error) {
	read := func(p string) ([]byte, error) {
		// A branch must not stall a merge with a file no reader would read.
		if fi, err := os.Stat(p); err == nil && fi.Size() > MaxFileBytes {
			return nil, fmt.Errorf("merge driver: %s is over %d MiB, the most acolyte reads; find what filled it (`git log --stat -- %s/%s`) and remove it", p, MaxFileBytes>>20, Dir, MemoriesFile)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("merge driver: %w", err)
		}
		if n := bytes.Count(data, []byte("\n")); n > MaxFileMemories+1 {
			return nil, fmt.Errorf("merge driver: %s has %d lines, and a file of project memory holds at most %d memories; find what filled it (`git log --stat -- %s`) and remove those lines", p, n, MaxFileMemories, Dir)
		}
		return data, nil
	}
	base, err := read(basePath)
	if err != nil {
		return nil, err
	}
	ours, err := read(oursPath)
	if err != nil {
		return nil, err
	}
	theirs, err := read(theirsPath)
	if err != nil {
		return nil, err
	}
	merged, report, err := Merge(base, ours, theirs)
	if err != nil {
		return nil, err
	}
	// git makes OURS (.merge_file_XXXXXX) in the worktree root and runs the
	// driver there: a temporary file beside it, left by a killed driver,
	// would hold every memory in the root, unignored, for `git add -A` to
	// commit. .acolyte/ beside it ignores and sweeps temporary files.
	tmpDir := filepath.Join(filepath.Dir(oursPath), Dir)
	if fi, err := os.Stat(tmpDir); err != nil || !fi.IsDir() {
		tmpDir = ""
	}
	if err := atomicfile.Write(oursPath, atomicfile.Options{Perm: 0o644, Durable: true, TempDir: tmpDir}, atomicfile.Bytes(merged)); err != nil {
		return report, fmt.Errorf("merge driver: writing %s: %w", oursPath, err)
	}
	return report, nil
}
