package gitsync

import (
	"os/exec"
	"strings"
	"testing"
)

// gitsync knows git and the .acolyte/ files; it reaches the index through
// its Store interface and the agent not at all, so no engine package (or
// its database driver) is built into it.
func TestGitsyncImportsNoEngineNorAgent(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/acolyte-dev/acolyte/"
	allowed := map[string]bool{
		module + "gitsync":             true,
		module + "gitsync/format":      true,
		module + "gitsync/secrets":     true,
		module + "internal/atomicfile": true,
		module + "memory":              true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, module) && !allowed[pkg] {
			t.Errorf("gitsync depends on %s; reach the index through gitsync.Store", pkg)
		}
		if strings.HasPrefix(pkg, "modernc.org/sqlite") || strings.HasPrefix(pkg, "github.com/jackc/pgx") {
			t.Errorf("gitsync depends on the database driver %s", pkg)
		}
	}
}
