package project

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// The layouts keep a checkout's files and its index in step through a
// Workspace, which is all they know of a checkout: they build on the file
// work (acolytedir) and the plumbing (git), never on gitsync, whose
// Checkout, hooks and pre-commit hook build on them; and they reach the
// index through Store, so no engine package is built into them.
func TestProjectBuildsOnFilesAndPlumbingOnly(t *testing.T) {
	const module = layouttest.Module
	allowed := map[string]bool{
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
			t.Errorf("gitsync/internal/project depends on %s", pkg)
		}
		if strings.HasPrefix(pkg, "modernc.org/sqlite") || strings.HasPrefix(pkg, "github.com/jackc/pgx") {
			t.Errorf("gitsync/internal/project depends on the database driver %s", pkg)
		}
	}
}
