package precommit

import (
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// The pre-commit hook works through a project.Workspace: it builds on the
// layouts, the files and the plumbing, never on gitsync, whose RunHook
// calls it, and reaches the index through project.Store, so no engine
// package is built into it.
func TestPrecommitBuildsOnTheLayoutsOnly(t *testing.T) {
	layouttest.DependsOnlyOn(t, "gitsync/internal/precommit", layouttest.GitsyncLayer(t, "gitsync/internal/precommit")...)
}
