package agent

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// The agent knows models: it reaches memory through the memory package's
// interfaces, never an engine, an embedder or git.
func TestAgentImportsNoEngineNorGit(t *testing.T) {
	const module = layouttest.Module
	for _, pkg := range layouttest.Deps(t) {
		switch {
		case pkg == module+"memory/team":
			// Team routing builds on the domain alone (its own layout
			// test holds it); the tools ask it why a team side was
			// left out (team.Note).
		case strings.HasPrefix(pkg, module+"memory/"), strings.HasPrefix(pkg, module+"gitsync"), strings.HasPrefix(pkg, module+"cmd"):
			t.Errorf("agent depends on %s; take what it needs as an interface", pkg)
		case strings.HasPrefix(pkg, "modernc.org/sqlite"), strings.HasPrefix(pkg, "github.com/go-git/"):
			t.Errorf("agent depends on %s", pkg)
		}
	}
}
