package project

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/memory"
)

// check reads and checks the one memories file for Check, adding
// its problems to report. It returns the memories no tombstone covers and
// where their lines are; unreadable is true when the file cannot be read
// as a whole, which is then the only problem reported.
func (one OneFile) check(report *Report) (existing []memory.Memory, locate acolytedir.LineLocator, missing, unreadable bool, err error) {
	root := one.Root
	data, err := acolytedir.ReadMemories(root)
	missing = errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return nil, nil, missing, false, fmt.Errorf("checking project memories: %w", err)
	}
	decoded, err := format.DecodeAll(acolytedir.MemoriesRel, data)
	if err != nil {
		reportUnreadable(report, "", err)
		return nil, nil, missing, true, nil
	}
	locate = acolytedir.OneFileLocator(data)
	existing, forgottenProblems := checkForgotten(one, root, decoded.Memories, locate)
	report.Problems = append(report.Problems, forgottenProblems...)
	lineProblems(one, report, decoded)
	// Duplicates and invalid lines are problems of their own, with their
	// own lines; "not canonical" would only repeat them.
	if !missing && len(decoded.Duplicates)+len(decoded.Invalid)+len(forgottenProblems) == 0 && !format.IsCanonical(data, existing) {
		report.Problems = append(report.Problems, Problem{Message: "the file is not in canonical form (sorted by id, one memory per line, fixed key order), " +
			"as a merge or rebase without acolyte's merge driver, or an edit by hand, leaves it"})
	}
	return existing, locate, missing, false, nil
}

// check is OneFile.check for a split project: every file is
// checked as the one file is, and besides, a memory in the inbox or in a
// shard its id does not hash to is a problem that sync fixes.
func (s Shards) check(report *Report) (existing []memory.Memory, locate acolytedir.LineLocator, missing, unreadable bool, err error) {
	root := s.Root
	p, err := acolytedir.ReadSplit(root)
	if err != nil {
		return nil, nil, false, false, fmt.Errorf("checking project memories: %w", err)
	}
	parts, errs := acolytedir.DecodeFiles(p.Files)
	for i, err := range errs {
		if err != nil {
			// Every damaged file is named, not only the first: each
			// hides its own memories from search (DecodeReadable).
			reportUnreadable(report, format.Dir+"/"+p.Files[i].Rel, err)
			unreadable = true
		}
	}
	if unreadable {
		return nil, nil, false, true, nil
	}
	joined := format.Join(parts)
	locate = p.Locator()
	existing, forgottenProblems := checkForgotten(s, root, joined.Memories, locate)
	report.Problems = append(report.Problems, forgottenProblems...)
	lineProblems(s, report, joined)
	for i, f := range p.Files {
		rel := format.Dir + "/" + f.Rel
		d := parts[i].Decoded
		if f.Rel == format.MemoriesFile {
			if n := len(d.Memories); n > 0 {
				report.Problems = append(report.Problems, Problem{File: rel, Message: fmt.Sprintf("holds %d memories, which a split project keeps in %s/, "+
					"as a merge with a branch that had not split, or an acolyte older than the split, leaves them; `%s` moves them to their shards", n, acolytedir.ShardsRel, acolytedir.FixCommand)})
			}
			continue
		}
		shard, _ := format.ParseShardFile(f.Rel)
		for _, m := range format.MisplacedIn(shard, d.Memories) {
			_, line := locate(m.ID)
			report.Problems = append(report.Problems, Problem{File: rel, Line: line, Message: fmt.Sprintf("memory %s belongs in %s/%s, the shard its id hashes to; `%s` moves it",
				m.ID, format.Dir, format.ShardFile(format.ShardOf(m.ID)), acolytedir.FixCommand)})
		}
		if len(d.Memories)+len(d.InvalidLines) == 0 {
			report.Problems = append(report.Problems, Problem{File: rel, Message: fmt.Sprintf("holds no memory; `%s` removes it", acolytedir.FixCommand)})
			continue
		}
		if len(d.Duplicates)+len(d.Invalid) == 0 && !format.IsCanonical(f.Data, d.Memories) {
			report.Problems = append(report.Problems, Problem{File: rel, Message: "the file is not in canonical form (sorted by id, one memory per line, fixed key order), " +
				"as a merge or rebase without acolyte's merge driver, or an edit by hand, leaves it"})
		}
	}
	return existing, locate, false, false, nil
}

// reportUnreadable makes err, a file that cannot be read as a whole, the
// report's problem, with its fix. file is set for a split project's file.
func reportUnreadable(report *Report, file string, err error) {
	problem := Problem{File: file, Message: err.Error()}
	var le *format.LineError
	if errors.As(err, &le) {
		problem = Problem{File: file, Line: le.Line, Message: le.Err.Error()}
	}
	report.Problems = append(report.Problems, problem)
	report.Fix = "fix the line by hand, then run `" + acolytedir.FixCommand + "`"
	if errors.Is(err, format.ErrConflictMarkers) {
		report.Fix = "resolve the merge conflict, then run `" + acolytedir.FixCommand + "`"
	}
}

// lineProblems adds d's invalid and duplicate lines to report; split says
// to name each line's file.
func lineProblems(l Layout, report *Report, d format.Decoded) {
	file := func(le *format.LineError) string { return l.problemFile(le.File) }
	for _, le := range d.Invalid {
		report.Problems = append(report.Problems, Problem{File: file(le), Line: le.Line, Message: le.Err.Error()})
	}
	if len(d.Invalid) > 0 {
		// sync keeps an unreadable line as it is, so it cannot fix it.
		report.Fix = "fix or delete the lines named above by hand, then run `" + acolytedir.FixCommand + "` and commit " + report.File
	}
	for _, dup := range d.Duplicates {
		report.Problems = append(report.Problems, Problem{File: file(dup), Line: dup.Line, Message: dup.Err.Error()})
	}
}

// problemFile leaves a one-file project's problems naming only their
// line: the report names the file.
func (one OneFile) problemFile(string) string { return "" }

// problemFile names the shard a problem's line is in.
func (s Shards) problemFile(file string) string { return file }
