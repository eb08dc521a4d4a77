package memory_test

import (
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// A tool offers a model only the scopes that can succeed: no project
// outside a repository, no team without a team database, and a toolkit
// wrapped for its write checks offers what the toolkit it wraps offers.
func TestScopesOfOffersOnlyWhatCanSucceed(t *testing.T) {
	outside := memory.Scoped{Visibility: memory.Visibility{SessionKey: "s"}}
	inside := memory.Scoped{Visibility: memory.Visibility{ProjectKey: "/repo", SessionKey: "s"}}
	for _, c := range []struct {
		name string
		tk   memory.Toolkit
		want []memory.Scope
	}{
		{"outside a repository", outside, []memory.Scope{memory.ScopeUser, memory.ScopeSession}},
		{"inside a repository", inside, []memory.Scope{memory.ScopeProject, memory.ScopeUser, memory.ScopeSession}},
		{"checked, outside a repository", memory.Checked{Toolkit: outside}, []memory.Scope{memory.ScopeUser, memory.ScopeSession}},
		{"checked, inside a repository", memory.Checked{Toolkit: inside}, []memory.Scope{memory.ScopeProject, memory.ScopeUser, memory.ScopeSession}},
	} {
		got := memory.ScopesOf(c.tk)
		var want []memory.Scope
		for _, s := range memory.Scopes {
			if slices.Contains(c.want, s) {
				want = append(want, s)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: ScopesOf = %v, want %v", c.name, got, want)
		}
	}
}
