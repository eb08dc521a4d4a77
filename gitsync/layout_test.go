package gitsync

import (
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// gitsync knows git and the .acolyte/ files; it reaches the index through
// its Store interface and the agent not at all, so no engine package (or
// its database driver) is built into it. The stale check reads git's
// objects itself (gitsync/internal/odb) and the cited files through
// internal/beneath; it knows nothing else.
func TestGitsyncImportsNoEngineNorAgent(t *testing.T) {
	layouttest.DependsOnlyOn(t, "gitsync", layouttest.GitsyncLayer(t, "gitsync")...)
}
