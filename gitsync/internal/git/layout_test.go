package git

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// The plumbing knows git and the files' stat, nothing of the index, the
// .acolyte/ files' layouts or the hooks: every other part of gitsync builds
// on it, never the other way round. It reads the staged tree for
// derivation (a derive.Tree), so it builds on derive and what derive does.
func TestGitIsPlumbing(t *testing.T) {
	const module = layouttest.Module
	allowed := map[string]bool{
		module + "gitsync/internal/git": true,
		module + "gitsync/derive":       true,
		module + "gitsync/format":       true,
		module + "internal/secrets":     true,
		module + "internal/atomicfile":  true,
		module + "internal/lazyre":      true,
		module + "internal/subpath":     true,
		module + "memory":               true,
	}
	for _, pkg := range layouttest.Deps(t) {
		if strings.HasPrefix(pkg, module) && !allowed[pkg] {
			t.Errorf("gitsync/internal/git depends on %s; plumbing builds on no other part of gitsync", pkg)
		}
	}
}
