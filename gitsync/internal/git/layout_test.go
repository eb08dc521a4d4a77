package git

import (
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// The plumbing knows git and the files' stat, nothing of the index, the
// .acolyte/ files' layouts or the hooks: every other part of gitsync builds
// on it, never the other way round. It reads the staged tree for
// derivation (a derive.Tree), so it builds on derive and what derive does.
func TestGitIsPlumbing(t *testing.T) {
	layouttest.DependsOnlyOn(t, "gitsync/internal/git", layouttest.GitsyncLayer(t, "gitsync/internal/git")...)
}
