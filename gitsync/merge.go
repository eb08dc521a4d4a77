package gitsync

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/memory"
)

// Merge merges three versions of memories.jsonl by memory id, as git's merge
// driver: memories added on either side are kept, a memory deleted on one
// side and untouched on the other is deleted, and every other disagreement
// is resolved deterministically and described in report:
//   - edited on both sides: the later "updated" wins; on a tie the
//     lexicographically larger content, then the larger encoded line, so
//     both merge directions agree;
//   - edited on one side and deleted on the other: the edit is kept, because
//     losing a deliberate change is worse than keeping a memory someone can
//     remove again.
//
// base is empty when both branches created the file. The output is
// canonical. Inputs with conflict markers or invalid lines are refused.
func Merge(base, ours, theirs []byte) (merged []byte, report []string, err error) {
	b, err := Decode("base", base)
	if err != nil {
		return nil, nil, fmt.Errorf("merging: %w", err)
	}
	o, err := Decode("ours", ours)
	if err != nil {
		return nil, nil, fmt.Errorf("merging: %w", err)
	}
	t, err := Decode("theirs", theirs)
	if err != nil {
		return nil, nil, fmt.Errorf("merging: %w", err)
	}
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
			case same(om, tm), inBase && same(tm, bm):
				out = append(out, om)
			case inBase && same(om, bm):
				out = append(out, tm)
			default:
				winner, side := pickLater(om, tm)
				out = append(out, winner)
				verb := "edited on both sides"
				if !inBase {
					verb = "added differently on both sides"
				}
				report = append(report, fmt.Sprintf("%s: %s; kept %s version (%s)", id, verb, side, describe(winner)))
			}
		case inOurs:
			switch {
			case !inBase:
				out = append(out, om)
			case !same(om, bm):
				out = append(out, om)
				report = append(report, fmt.Sprintf("%s: deleted on their side but edited on ours; kept our edit (%s)", id, describe(om)))
			}
		case inTheirs:
			switch {
			case !inBase:
				out = append(out, tm)
			case !same(tm, bm):
				out = append(out, tm)
				report = append(report, fmt.Sprintf("%s: deleted on our side but edited on theirs; kept their edit (%s)", id, describe(tm)))
			}
		}
	}
	return Encode(out), report, nil
}

func indexByID(mems []memory.Memory) map[string]memory.Memory {
	byID := make(map[string]memory.Memory, len(mems))
	for _, m := range mems {
		byID[m.ID] = m
	}
	return byID
}

// same compares memories as the file stores them.
func same(a, b memory.Memory) bool {
	return bytes.Equal(encodeLine(toRecord(a)), encodeLine(toRecord(b)))
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
	if bytes.Compare(encodeLine(toRecord(ours)), encodeLine(toRecord(theirs))) >= 0 {
		return ours, "our"
	}
	return theirs, "their"
}

// describe names a memory in one short line for reports and diffs.
func describe(m memory.Memory) string {
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
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("merge driver: %w", err)
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
	return report, writeAtomic(oursPath, merged)
}
