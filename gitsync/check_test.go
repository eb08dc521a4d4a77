package gitsync

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/project"
	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/memory"
)

// syncedRepo writes AGENTS.md and a memories file that matches it plus one
// stored memory, as `acolyte sync` would leave it.
func syncedRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"AGENTS.md":           "## Testing\n\n- Run go test before pushing.\n- Never mock the database.\n",
		".acolyte/seeds.json": `["The CLI is built with urfave/cli."]`,
	})
	derived, err := derive.Memories(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := format.WriteFile(format.MemoriesPath(root), derive.Refresh([]memory.Memory{stored("01A", "a stored fact", t0)}, derived)); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestCheckFreshRepository(t *testing.T) {
	report, err := Check(syncedRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	if !report.OK || len(report.Problems) != 0 || report.Fix != "" {
		t.Fatalf("report = %+v", report)
	}
	empty, err := Check(t.TempDir())
	if err != nil || !empty.OK {
		t.Fatalf("a repository without memories or rules: %+v, %v", empty, err)
	}
}

func TestCheckShowsWhatAnAgentsEditChanges(t *testing.T) {
	root := syncedRepo(t)
	gittest.WriteFiles(t, root, map[string]string{"AGENTS.md": "## Testing\n\n- Run go test -race before pushing.\n- Never mock the database.\n"})
	report, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if report.OK || !strings.Contains(report.Fix, "acolyte sync") {
		t.Fatalf("report = %+v", report)
	}
	diff := FormatDiff(report.File, report.Changes)
	for _, want := range []string{
		"--- .acolyte/memories.jsonl (committed)",
		`[rule AGENTS.md#Testing] "Run go test before pushing."`,
		`[rule AGENTS.md#Testing] "Run go test -race before pushing."`,
	} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if len(report.Changes) != 2 || report.Changes[0].Op == report.Changes[1].Op {
		t.Errorf("want one add and one remove, got %+v", report.Changes)
	}
	if _, err := json.Marshal(report); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFindsInvalidFiles(t *testing.T) {
	tests := []struct {
		name   string
		mangle func(data string) string
		want   string
		fix    string
	}{
		{"conflict markers", func(d string) string { return d + "<<<<<<< HEAD\n=======\n>>>>>>> x\n" }, "unresolved git merge conflict", "resolve the merge conflict"},
		{"not canonical", func(d string) string { return strings.ReplaceAll(d, "\n", "\r\n") }, "canonical form", "acolyte sync"},
		{"secret", func(d string) string {
			return d + `{"id":"01Z","kind":"stored","content":"deploy key ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"}` + "\n"
		}, "memory 01Z contains a GitHub token", "acolyte forget 01Z"},
		{"seeds removed", func(d string) string { return d }, "differ from AGENTS.md", "acolyte sync"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := syncedRepo(t)
			data, _ := os.ReadFile(format.MemoriesPath(root))
			os.WriteFile(format.MemoriesPath(root), []byte(tt.mangle(string(data))), 0o644)
			if tt.name == "seeds removed" {
				os.Remove(root + "/.acolyte/seeds.json")
			}
			report, err := Check(root)
			if err != nil {
				t.Fatal(err)
			}
			var messages []string
			for _, p := range report.Problems {
				messages = append(messages, p.Message)
			}
			if report.OK || !strings.Contains(strings.Join(messages, "\n"), tt.want) || !strings.Contains(report.Fix, tt.fix) {
				t.Errorf("report = %+v", report)
			}
		})
	}
}

// A union merge can bring back the line of a memory forgotten.jsonl covers:
// check reports it and sends to sync, and an unreadable tombstone is a
// problem of its own.
func TestCheckFindsForgottenLinesAndBadTombstones(t *testing.T) {
	root := syncedRepo(t)
	mems, err := format.ReadFile(format.MemoriesPath(root))
	if err != nil {
		t.Fatal(err)
	}
	var forgotten memory.Memory
	for _, m := range mems {
		if m.ID == "01A" {
			forgotten = m
		}
	}
	if err := format.WriteForgotten(root, []format.Tombstone{format.TombstoneFor(forgotten, t0.Add(time.Hour))}); err != nil {
		t.Fatal(err)
	}
	report, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if report.OK || len(report.Problems) != 1 || !strings.Contains(report.Problems[0].Message, "memory 01A was forgotten") || !strings.Contains(report.Fix, FixCommand) {
		t.Fatalf("report = %+v", report)
	}
	os.WriteFile(format.ForgottenPath(root), []byte("{\"id\":\"01A\"}\n"), 0o644)
	report, err = Check(root)
	if err != nil || report.OK || !strings.Contains(report.Problems[0].Message, "forgotten.jsonl:1") {
		t.Fatalf("report = %+v, %v", report, err)
	}
}

// TestCheckDiffsOnlyWhatRefreshCanChange: the changes Check computes from
// the derived memories and those whose id a derived one takes are the
// changes Refresh and Diff give over the whole file, in either order of
// the file.
func TestCheckDiffsOnlyWhatRefreshCanChange(t *testing.T) {
	rule := func(id, content string) memory.Memory {
		return memory.Memory{ID: id, Scope: memory.ScopeProject, Kind: memory.KindRule, Content: content, Source: "AGENTS.md#Rules"}
	}
	existing := []memory.Memory{
		stored("01A", "a stored fact", t0),
		rule("r-1", "an unchanged rule"),
		rule("r-2", "a rule that changes"),
		rule("r-3", "a rule that is gone"),
		stored("r-4", "a stored fact whose id a rule takes", t0),
		{ID: "s-1", Scope: memory.ScopeProject, Kind: memory.KindSeed, Content: "a seed", Source: derive.SeedsFile},
		stored("z-1", "a later stored fact", t0),
	}
	derived := []memory.Memory{rule("r-1", "an unchanged rule"), rule("r-2", "the rule, changed"), rule("r-4", "a rule"), rule("r-5", "a new rule")}
	reversed := slices.Clone(existing)
	slices.Reverse(reversed)
	for _, mems := range [][]memory.Memory{existing, reversed} {
		want := Diff(mems, derive.Refresh(mems, derived))
		sub := project.DerivableAmong(mems, derived)
		if got := Diff(sub, derive.Refresh(sub, derived)); !reflect.DeepEqual(got, want) || len(want) != 5 {
			t.Errorf("over the derivable memories:\n%+v\nover all:\n%+v", got, want)
		}
	}
}
