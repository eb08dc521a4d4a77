package hooks

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// Installing hooks edits the team's hook files and git's config; it needs
// the repository (gitsync.Repo) and nothing of the index, the memories'
// layout or the agent. gitsync itself never builds on this package: the
// hooks it runs are its own, and only installing them lives here.
func TestHooksBuildOnGitsyncOnly(t *testing.T) {
	const module = layouttest.Module
	allowed := map[string]bool{
		module + "gitsync/hooks":               true,
		module + "gitsync":                     true,
		module + "gitsync/format":              true,
		module + "gitsync/internal/git":        true,
		module + "gitsync/internal/acolytedir": true,
		module + "gitsync/internal/project":    true,
		module + "gitsync/internal/precommit":  true,
		module + "internal/secrets":            true,
		module + "internal/atomicfile":         true,
		module + "internal/flock":              true,
		module + "internal/mapfile":            true,
		module + "internal/subpath":            true,
		module + "internal/beneath":            true,
		module + "internal/lazyre":             true,
		module + "gitsync/derive":              true,
		module + "memory":                      true,
	}
	// The stale check reads git's objects itself; it knows nothing else.
	allowed[module+"gitsync/internal/odb"] = true
	for _, pkg := range layouttest.Deps(t) {
		if strings.HasPrefix(pkg, module) && !allowed[pkg] {
			t.Errorf("gitsync/hooks depends on %s", pkg)
		}
		if strings.HasPrefix(pkg, "modernc.org/sqlite") || strings.HasPrefix(pkg, "github.com/jackc/pgx") {
			t.Errorf("gitsync/hooks depends on the database driver %s", pkg)
		}
	}
}
