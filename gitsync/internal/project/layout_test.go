package project

import (
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// The layouts keep a checkout's files and its index in step through a
// Workspace, which is all they know of a checkout: they build on the file
// work (acolytedir) and the plumbing (git), never on gitsync, whose
// Checkout, hooks and pre-commit hook build on them; and they reach the
// index through Store, so no engine package is built into them.
func TestProjectBuildsOnFilesAndPlumbingOnly(t *testing.T) {
	layouttest.DependsOnlyOn(t, "gitsync/internal/project", layouttest.GitsyncLayer(t, "gitsync/internal/project")...)
}
