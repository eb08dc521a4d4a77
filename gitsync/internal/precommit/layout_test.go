package precommit

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// The pre-commit hook works through a project.Workspace: it builds on the
// layouts, the files and the plumbing, never on gitsync, whose RunHook
// calls it, and reaches the index through project.Store, so no engine
// package is built into it.
func TestPrecommitBuildsOnTheLayoutsOnly(t *testing.T) {
	const module = layouttest.Module
	allowed := map[string]bool{
		module + "gitsync/internal/precommit":  true,
		module + "gitsync/internal/project":    true,
		module + "gitsync/internal/acolytedir": true,
		module + "gitsync/internal/git":        true,
		module + "gitsync/derive":              true,
		module + "gitsync/format":              true,
		module + "internal/secrets":            true,
		module + "internal/atomicfile":         true,
		module + "internal/flock":              true,
		module + "internal/mapfile":            true,
		module + "internal/lazyre":             true,
		module + "internal/subpath":            true,
		module + "memory":                      true,
	}
	for _, pkg := range layouttest.Deps(t) {
		if strings.HasPrefix(pkg, module) && !allowed[pkg] {
			t.Errorf("gitsync/internal/precommit depends on %s", pkg)
		}
		if strings.HasPrefix(pkg, "modernc.org/sqlite") || strings.HasPrefix(pkg, "github.com/jackc/pgx") {
			t.Errorf("gitsync/internal/precommit depends on the database driver %s", pkg)
		}
	}
}
