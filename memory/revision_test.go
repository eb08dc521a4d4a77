package memory

import (
	"slices"
	"testing"
	"time"
)

// A revision changes a memory's globs only when it says so, normalised as
// an add keeps them, and refuses an invalid one.
func TestRevisionSetsGlobsOnlyWhenAsked(t *testing.T) {
	m := Memory{ID: "01JB2Q3N5V8XK4M7R9T1W6Y0ZA", Scope: ScopeUser, Kind: KindStored, Content: "old", Globs: []string{"db/**"}}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	kept, err := Revision{Content: "new"}.Apply(m, now)
	if err != nil || !slices.Equal(kept.Globs, []string{"db/**"}) {
		t.Errorf("without SetGlobs: %v %v", kept.Globs, err)
	}
	set, err := Revision{Content: "new", SetGlobs: true, Globs: []string{" migrations/** ", "db/**", "db/**"}}.Apply(m, now)
	if err != nil || !slices.Equal(set.Globs, []string{"db/**", "migrations/**"}) {
		t.Errorf("SetGlobs: %v %v", set.Globs, err)
	}
	cleared, err := Revision{Content: "new", SetGlobs: true}.Apply(m, now)
	if err != nil || cleared.Globs != nil {
		t.Errorf("SetGlobs with none: %v %v", cleared.Globs, err)
	}
	if _, err := (Revision{Content: "new", SetGlobs: true, Globs: []string{"src/[a-"}}).Apply(m, now); err == nil {
		t.Error("an invalid glob was taken")
	}
}
