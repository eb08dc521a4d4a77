package agent

import (
	"os/exec"
	"strings"
	"testing"
)

// The agent knows models: it reaches memory through the memory package's
// interfaces, never an engine, an embedder or git.
func TestAgentImportsNoEngineNorGit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/acolyte-dev/acolyte/"
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case strings.HasPrefix(pkg, module+"memory/"), strings.HasPrefix(pkg, module+"gitsync"), strings.HasPrefix(pkg, module+"cmd"):
			t.Errorf("agent depends on %s; take what it needs as an interface", pkg)
		case strings.HasPrefix(pkg, "modernc.org/sqlite"), strings.HasPrefix(pkg, "github.com/go-git/"):
			t.Errorf("agent depends on %s", pkg)
		}
	}
}
