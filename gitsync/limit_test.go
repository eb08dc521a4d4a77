package gitsync

import (
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// MaxIndexedMemories is one limit on every road (issue 37): a project
// past it takes writes, commits through the pre-commit hook and passes
// check, and a fresh index holds exactly the limit, the newest, saying
// how many it left out.
func TestPastTheLimitEveryRoadAgrees(t *testing.T) {
	t.Parallel() // its own repositories and index, hundreds of ms to seconds of git and SQLite
	if testing.Short() {
		t.Skip("indexes 100,000 memories twice")
	}
	w, mems := splitWorkspace(t, MaxIndexedMemories)
	w.ws.Settle = 0
	runGit(t, w.Repo.Root, "add", "-A")
	runGit(t, w.Repo.Root, "commit", "-qm", "at the limit")
	var added []string
	for _, content := range []string{"The first memory past the limit.", "The second memory past the limit."} {
		a, err := w.Add(t.Context(), memory.Draft{Scope: memory.ScopeProject, Kind: memory.KindStored, Content: content})
		if err != nil {
			t.Fatalf("remember past the limit: %v", err)
		}
		added = append(added, a.Memory.ID)
	}
	runGit(t, w.Repo.Root, "add", "-A")
	if res, err := w.RunHook(t.Context(), "pre-commit", nil); err != nil || len(res.Refused) > 0 {
		t.Fatalf("the pre-commit hook past the limit: %+v, %v", res, err)
	}
	runGit(t, w.Repo.Root, "commit", "-qm", "past the limit")
	if committed := runGit(t, w.Repo.Root, "grep", "-c", "past the limit", "HEAD", "--", format.Dir); !strings.Contains(committed, ":1") {
		t.Fatalf("the commit does not hold the memories past the limit: %q", committed)
	}
	report, err := Check(w.Repo.Root)
	if err != nil || !report.OK {
		t.Fatalf("check past the limit: %+v, %v", report.Problems, err)
	}

	fresh := workspaceAt(t, w.Repo.Root)
	var warnings []string
	fresh.Warn = func(m string) { warnings = append(warnings, m) }
	listed, err := fresh.List(t.Context(), memory.Filter{Scope: memory.ScopeProject, Limit: MaxIndexedMemories + 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != MaxIndexedMemories {
		t.Fatalf("a fresh index holds %d project memories, want %d", len(listed), MaxIndexedMemories)
	}
	ids := make(map[string]bool, len(listed))
	for _, m := range listed {
		ids[m.ID] = true
	}
	if !ids[added[0]] || !ids[added[1]] || ids[mems[0].ID] || ids[mems[1].ID] {
		t.Error("the index did not keep the newest memories and leave out the oldest")
	}
	if !slices.ContainsFunc(warnings, func(m string) bool { return strings.Contains(m, "2 of the project's 100002 memories are left out") }) {
		t.Errorf("no warning says what was left out: %q", warnings)
	}
}
