package gitsync

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// gitsync knows git and the .acolyte/ files; it reaches the index through
// its Store interface and the agent not at all, so no engine package (or
// its database driver) is built into it.
func TestGitsyncImportsNoEngineNorAgent(t *testing.T) {
	const module = layouttest.Module
	allowed := map[string]bool{
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
			t.Errorf("gitsync depends on %s; reach the index through gitsync.Store", pkg)
		}
		if strings.HasPrefix(pkg, "modernc.org/sqlite") || strings.HasPrefix(pkg, "github.com/jackc/pgx") {
			t.Errorf("gitsync depends on the database driver %s", pkg)
		}
	}
}
