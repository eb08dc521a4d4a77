package hooks

import (
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// Installing hooks edits the team's hook files and git's config; it needs
// the repository (gitsync.Repo) and nothing of the index, the memories'
// layout or the agent. gitsync itself never builds on this package: the
// hooks it runs are its own, and only installing them lives here.
func TestHooksBuildOnGitsyncOnly(t *testing.T) {
	layouttest.DependsOnlyOn(t, "gitsync/hooks", layouttest.GitsyncLayer(t, "gitsync/hooks")...)
}
