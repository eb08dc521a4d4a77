package derive

import (
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/memory"
)

func TestDeriveCombinesRulesAndSeeds(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"AGENTS.md":           "## Testing\n\n- Run go test before pushing.\n",
		".acolyte/seeds.json": `["The database is SQLite."]`,
	})
	derived, err := Memories(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(derived) != 2 || derived[0].Kind != memory.KindRule || derived[1].Kind != memory.KindSeed {
		t.Fatalf("Derive = %+v", derived)
	}
	gittest.WriteFiles(t, root, map[string]string{".acolyte/seeds.json": `["ok", 1]`})
	if _, err := Memories(root); err == nil || !strings.Contains(err.Error(), ".acolyte/seeds.json:1:8") {
		t.Fatalf("bad seeds: %v", err)
	}
}

func TestRefreshReplacesDerivedAndKeepsEverythingElse(t *testing.T) {
	oldRule := memory.Memory{ID: "r-old", Kind: memory.KindRule, Content: "Old rule text.", Source: "AGENTS.md"}
	keptRule := memory.Memory{ID: "r-kept", Kind: memory.KindRule, Content: "Kept rule.", Source: "AGENTS.md", CreatedAt: t0, UpdatedAt: t0}
	oldSeed := memory.Memory{ID: "s-old", Kind: memory.KindSeed, Content: "Old seed.", Source: SeedsFile}
	imported := memory.Memory{ID: "s-imp", Kind: memory.KindSeed, Content: "Imported once.", Source: "team.json"}
	fact := memory.Memory{ID: "01A", Scope: memory.ScopeProject, Kind: memory.KindStored, Content: "a stored fact", Source: "cli", CreatedAt: t0, UpdatedAt: t0}
	obs := memory.Memory{ID: "01B", Kind: memory.KindObservation, Content: "an observation", UpdatedAt: t0}
	existing := []memory.Memory{oldRule, keptRule, oldSeed, imported, fact, obs}

	newRule := memory.Memory{ID: "r-new", Kind: memory.KindRule, Content: "New rule text.", Source: "AGENTS.md"}
	keptAgain := keptRule
	keptAgain.CreatedAt, keptAgain.UpdatedAt = time.Time{}, time.Time{}
	got := Refresh(existing, []memory.Memory{keptAgain, newRule})

	var ids []string
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, " ") != "01A 01B r-kept r-new s-imp" {
		t.Fatalf("Refresh ids = %v", ids)
	}
	if !got[2].CreatedAt.Equal(t0) {
		t.Error("an unchanged rule lost its timestamps")
	}
	if string(format.Encode(Refresh(got, []memory.Memory{keptAgain, newRule}))) != string(format.Encode(got)) {
		t.Error("Refresh is not idempotent")
	}
}

// A person who wants to change a rule or seed needs the line to edit: the
// ui points there instead of offering an edit sync would undo.
func TestDeriveTellsWhereEachMemoryIs(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"AGENTS.md":           "# Project\n\n## Testing\n\n- Run go test before pushing.\n- Never mock the database.\n",
		"docs/AGENTS.md":      "Docs are written in British English.\n",
		".acolyte/seeds.json": "[\n  \"The database is SQLite.\",\n  {\"content\": \"Deploys go through CI.\"}\n]\n",
	})
	d, err := Worktree(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Origin{
		"Run go test before pushing.":                    {"AGENTS.md", 5},
		"Never mock the database.":                       {"AGENTS.md", 6},
		"In docs/: Docs are written in British English.": {"docs/AGENTS.md", 1},
		"The database is SQLite.":                        {".acolyte/seeds.json", 2},
		"Deploys go through CI.":                         {".acolyte/seeds.json", 3},
	}
	if len(d.Memories) != len(want) {
		t.Fatalf("derived %d memories, want %d: %+v", len(d.Memories), len(want), d.Memories)
	}
	for _, m := range d.Memories {
		if got := d.Origins[m.ID]; got != want[m.Content] {
			t.Errorf("origin of %q = %+v, want %+v", m.Content, got, want[m.Content])
		}
	}
}

// t0 is the time the memories of these tests were written.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
