package derive

import (
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// Derivation is pure file work, so that every clone derives byte-identical
// memories: it reads a Tree (the worktree, or git's index through
// gitsync), runs no git and knows nothing of the index or the workspace.
func TestDeriveIsPureFileWork(t *testing.T) {
	const module = layouttest.Module
	allowed := map[string]bool{
		module + "gitsync/derive":      true,
		module + "gitsync/format":      true,
		module + "internal/secrets":    true,
		module + "internal/atomicfile": true,
		module + "internal/lazyre":     true,
		module + "internal/subpath":    true,
		module + "memory":              true,
	}
	for _, pkg := range layouttest.Deps(t) {
		if strings.HasPrefix(pkg, module) && !allowed[pkg] {
			t.Errorf("gitsync/derive depends on %s", pkg)
		}
	}
	if slices.Contains(layouttest.Imports(t), "os/exec") {
		t.Error("gitsync/derive imports os/exec; reading git's index is gitsync's job")
	}
}
