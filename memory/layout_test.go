package memory_test

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// memory is the domain: every engine, embedder and front end builds on it,
// so it imports no package of ours, and no database driver either (those
// live one per package beneath it, as memory/sqlite and memory/postgres).
func TestMemoryImportsNothingOfOursNorADatabase(t *testing.T) {
	for _, pkg := range layouttest.Deps(t) {
		switch {
		case strings.HasPrefix(pkg, layouttest.Module) && pkg != layouttest.Module+"memory",
			pkg == "database/sql", strings.HasPrefix(pkg, "modernc.org/"), strings.HasPrefix(pkg, "github.com/jackc/"):
			t.Errorf("memory depends on %s; move what needs it to the package of that engine", pkg)
		}
	}
}
