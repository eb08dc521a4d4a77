package memory

import (
	"fmt"
	"slices"
)

// ScopeLister is a Toolkit that says which scopes it stores and finds,
// as one that also reaches a team database does (memory/team).
type ScopeLister interface {
	Scopes() []Scope
}

// ScopesOf lists the scopes tk stores and finds, in the order of Scopes:
// team only when tk reaches a team database, and project only inside a
// repository (a Scoped toolkit without a project key is outside any), so a
// tool never offers a model a scope that can only fail.
func ScopesOf(tk Toolkit) []Scope {
	if l, ok := tk.(ScopeLister); ok {
		return l.Scopes()
	}
	project := true
	if s, ok := tk.(Scoped); ok && s.ProjectKey == "" {
		project = false
	}
	return slices.DeleteFunc(slices.Clone(Scopes), func(s Scope) bool {
		return s == ScopeTeam || s == ScopeProject && !project
	})
}

// DefaultScope is where a memory goes when its author names no scope: the
// repository's project memory inside one, the user's own outside any. The
// CLI's remember, the agent's and the MCP server's memory_add all agree.
func DefaultScope(tk Toolkit) Scope {
	if slices.Contains(ScopesOf(tk), ScopeProject) {
		return ScopeProject
	}
	return ScopeUser
}

// ParseScopeIn is ParseScope limited to the scopes offered.
func ParseScopeIn(s string, offered []Scope) (Scope, error) {
	if slices.Contains(offered, Scope(s)) {
		return Scope(s), nil
	}
	return "", fmt.Errorf("%w %q: use one of %s", ErrUnknownScope, s, joinNames(offered))
}
