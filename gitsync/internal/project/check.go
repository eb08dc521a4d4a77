package project

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/memory"
)

// Report is the outcome of Check. It marshals to JSON for `check --json`.
type Report struct {
	// File is the checked file, relative to the worktree root.
	File string `json:"file"`
	// OK is true when the file is valid, canonical, free of secrets and its
	// rules and seeds match the instruction files and seeds.json.
	OK       bool      `json:"ok"`
	Problems []Problem `json:"problems,omitempty"`
	// Changes is what `acolyte sync` would change in the file.
	Changes []Change `json:"changes,omitempty"`
	// Fix says how to resolve the problems.
	Fix string `json:"fix,omitempty"`
	// Warnings are instruction files or seeds.json that were not read
	// because they lead out of the repository; sync skips them too.
	Warnings []derive.Refusal `json:"warnings,omitempty"`
	// Refused are rules and seeds that sync will not write (secrets,
	// invalid memories): running sync cannot fix them, editing their file can.
	Refused []derive.Refusal `json:"refused,omitempty"`
}

// Problem is one thing wrong with the file, at a line when it has one.
type Problem struct {
	// File is where the problem is, relative to the worktree root, when
	// it is not Report.File: a split project's inbox or one of its shards.
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// Change is one memory that `acolyte sync` would add, remove or rewrite.
type Change struct {
	Op      string `json:"op"` // "add", "remove" or "update"
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Source  string `json:"source,omitempty"`
	Content string `json:"content"`
}

// Check verifies the committed memories file against the worktree without a
// database: it is what hooks and CI run. It returns an error only when a file
// cannot be read; everything wrong with the contents is in the Report.
func Check(root string) (Report, error) {
	l, err := LayoutOf(root)
	if err != nil {
		return Report{File: acolytedir.MemoriesRel}, fmt.Errorf("checking project memories: %w", err)
	}
	report := Report{File: l.location()}
	d, deriveErr := derive.Worktree(root)
	if deriveErr != nil {
		report.Problems = append(report.Problems, Problem{Message: deriveErr.Error()})
	}
	derived := d.Memories
	report.Warnings, report.Refused = d.Skipped, d.Refused
	var existing []memory.Memory
	var locate acolytedir.LineLocator
	var missing, unreadable bool
	existing, locate, missing, unreadable, err = l.check(&report)
	if err != nil || unreadable {
		return report, err
	}
	var storedSecrets []string
	for _, found := range format.FindSecrets(existing) {
		m, sec := existing[found.Index], found.Secret
		file, line := locate(m.ID)
		p := Problem{File: l.problemFile(file), Line: line, Message: fmt.Sprintf("%s %s; delete that line, rotate the credential and rewrite it without the secret",
			sec.Name(m, fmt.Sprintf("on line %d", line)), sec.Phrase())}
		report.Problems = append(report.Problems, p)
		if !derive.IsDerived(m) && sec.Field != "id" {
			storedSecrets = append(storedSecrets, m.ID)
		}
	}
	if deriveErr == nil {
		// Only derived memories, and any whose id a derived one takes, can
		// change: a large file's stored memories would pass through
		// Refresh and Diff unchanged, copied and compared for nothing.
		derivable := DerivableAmong(existing, derived)
		refreshed := derive.Refresh(derivable, derived)
		report.Changes = Diff(derivable, refreshed)
		if len(report.Changes) > 0 {
			report.Problems = append(report.Problems, Problem{Message: fmt.Sprintf("%d rule and seed memories differ from AGENTS.md and %s/%s", len(report.Changes), format.Dir, derive.SeedsFile)})
		} else if missing && len(refreshed) > 0 {
			report.Problems = append(report.Problems, Problem{Message: "the file is missing"})
		}
	}
	report.OK = len(report.Problems) == 0 && len(report.Refused) == 0
	if len(report.Refused) > 0 {
		// sync would refuse these again, so advising it would loop: the fix
		// is in the file that holds them.
		where := make([]string, len(report.Refused))
		for i, f := range report.Refused {
			where[i] = f.File
			if f.Line > 0 {
				where[i] += fmt.Sprintf(":%d", f.Line)
			}
		}
		report.Fix = "fix " + strings.Join(where, ", ") + " (remove each secret and rotate it; split or correct each invalid rule), then run `" + acolytedir.FixCommand + "` and commit " + report.File
	}
	if len(storedSecrets) > 0 && report.Fix == "" {
		// Sync keeps stored memories, so it cannot remove these.
		report.Fix = "run `acolyte forget " + strings.Join(storedSecrets, " ") + "`, rotate the credentials, and commit " + report.File
	}
	if !report.OK && report.Fix == "" {
		report.Fix = "run `" + acolytedir.FixCommand + "` and commit " + report.File
	}
	return report, nil
}

// DerivableAmong is the memories of existing that Refresh(existing,
// derived) may drop or replace: the derived ones, and any whose id a
// derived memory takes. Refresh and Diff over them alone give the changes
// they give over all of existing.
func DerivableAmong(existing, derived []memory.Memory) []memory.Memory {
	taken := make(map[string]bool, len(derived))
	for _, d := range derived {
		taken[d.ID] = true
	}
	var out []memory.Memory
	for _, m := range existing {
		if derive.IsDerived(m) || taken[m.ID] {
			out = append(out, m)
		}
	}
	return out
}

// checkForgotten reads forgotten.jsonl for Check: it returns the memories
// that no tombstone covers, and a problem for each line of it that is not a
// tombstone, for a file out of canonical order, and for each memory line
// still in the memories file although a tombstone covers it (data is the
// memories file, for their line numbers).
func checkForgotten(l Layout, root string, mems []memory.Memory, locate acolytedir.LineLocator) ([]memory.Memory, []Problem) {
	ts, err := acolytedir.ReadTombstones(root)
	if err != nil {
		return mems, []Problem{{Message: err.Error()}}
	}
	var problems []Problem
	for _, w := range ts.Warnings {
		problems = append(problems, Problem{Message: w})
	}
	if len(ts.Warnings) == 0 && !bytes.Equal(ts.Data, format.EncodeForgotten(ts.List)) {
		problems = append(problems, Problem{Message: acolytedir.ForgottenRel + " is not in canonical form (one tombstone per id, sorted by time), as a merge without acolyte leaves it"})
	}
	kept, forgotten := format.Forget(mems, ts.List)
	for _, m := range forgotten {
		file, line := locate(m.ID)
		p := Problem{File: l.problemFile(file), Line: line, Message: fmt.Sprintf("memory %s was forgotten (%s) but its line is still here, "+
			"as a merge without acolyte's merge driver leaves it; every command already hides it, and `%s` removes the line", m.ID, acolytedir.ForgottenRel, acolytedir.FixCommand)}
		problems = append(problems, p)
	}
	return kept, problems
}

// Diff lists the memories that differ between two sets, by id, in id order.
func Diff(before, after []memory.Memory) []Change {
	// Indexes, not copies: a large file's memories are copied once, not
	// into two maps.
	byID := func(mems []memory.Memory) map[string]int {
		out := make(map[string]int, len(mems))
		for i, m := range mems {
			out[m.ID] = i
		}
		return out
	}
	var changes []Change
	change := func(op string, m memory.Memory) Change {
		return Change{Op: op, ID: m.ID, Kind: string(m.Kind), Source: m.Source, Content: m.Content}
	}
	if changes, ok := diffSorted(before, after, change); ok {
		return changes
	}
	beforeByID, afterByID := byID(before), byID(after)
	for _, m := range before {
		if _, kept := afterByID[m.ID]; !kept {
			changes = append(changes, change("remove", m))
		}
	}
	for _, m := range after {
		i, had := beforeByID[m.ID]
		switch {
		case !had:
			changes = append(changes, change("add", m))
		case !format.Same(before[i], m):
			changes = append(changes, change("update", m))
		}
	}
	slices.SortStableFunc(changes, func(a, b Change) int { return strings.Compare(a.ID, b.ID) })
	return changes
}

// diffSorted is Diff of two sets sorted by unique id (a canonical file and
// what Refresh makes of it), by one walk over both instead of two maps of a
// large file's ids. ok is false when either set is not sorted that way.
func diffSorted(before, after []memory.Memory, change func(string, memory.Memory) Change) (changes []Change, ok bool) {
	for _, mems := range [][]memory.Memory{before, after} {
		for i := 1; i < len(mems); i++ {
			if mems[i-1].ID >= mems[i].ID { // an equal id is out of order too: ids must be unique
				return nil, false
			}
		}
	}
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		switch {
		case j == len(after) || i < len(before) && before[i].ID < after[j].ID:
			changes = append(changes, change("remove", before[i]))
			i++
		case i == len(before) || after[j].ID < before[i].ID:
			changes = append(changes, change("add", after[j]))
			j++
		default:
			if !format.Same(before[i], after[j]) {
				changes = append(changes, change("update", after[j]))
			}
			i, j = i+1, j+1
		}
	}
	return changes, true
}

// FormatDiff renders changes the way a unified diff reads: removed memories
// with "-", added with "+", one memory per line with its kind and source.
func FormatDiff(file string, changes []Change) string {
	if len(changes) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s (committed)\n+++ %s (after `%s`)\n", file, file, acolytedir.FixCommand)
	for _, c := range changes {
		sign := map[string]string{"add": "+", "remove": "-", "update": "~"}[c.Op]
		where := c.Kind
		if c.Source != "" {
			where += " " + c.Source
		}
		fmt.Fprintf(&b, "%s %s [%s] %s\n", sign, c.ID, where, format.Describe(memory.Memory{Content: c.Content}))
	}
	return b.String()
}
