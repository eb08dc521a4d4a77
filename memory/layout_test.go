package memory_test

import (
	"os/exec"
	"strings"
	"testing"
)

// memory is the domain: every engine, embedder and front end builds on it,
// so it imports no package of ours, and no database driver either (those
// live one per package beneath it, as memory/sqlite and memory/postgres).
func TestMemoryImportsNothingOfOursNorADatabase(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(pkg, "github.com/acolyte-dev/acolyte/") && pkg != "github.com/acolyte-dev/acolyte/memory",
			pkg == "database/sql", strings.HasPrefix(pkg, "modernc.org/"), strings.HasPrefix(pkg, "github.com/jackc/"):
			t.Errorf("memory depends on %s; move what needs it to the package of that engine", pkg)
		}
	}
}
