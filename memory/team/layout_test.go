package team

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// Routing between two toolkits needs the domain and nothing else: the team
// database is reached through memory.TeamEngine, so no engine or driver is
// built into this package.
func TestTeamBuildsOnTheDomainOnly(t *testing.T) {
	for _, pkg := range layouttest.Deps(t) {
		if strings.HasPrefix(pkg, layouttest.Module) && pkg != layouttest.Module+"memory/team" && pkg != layouttest.Module+"memory" {
			t.Errorf("memory/team depends on %s", pkg)
		}
	}
}
