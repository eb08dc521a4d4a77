package format

import (
	"os/exec"
	"strings"
	"testing"
)

// The format is a leaf: the merge driver and `acolyte check` read and write
// the file without git, the index or the rest of gitsync, and gitsync builds
// on the format, never the other way round.
func TestFormatImportsNeitherGitsyncNorGit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/acolyte-dev/acolyte/"
	allowed := map[string]bool{
		module + "gitsync/format":      true,
		module + "gitsync/secrets":     true,
		module + "internal/atomicfile": true,
		module + "memory":              true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, module) && !allowed[pkg] {
			t.Errorf("gitsync/format depends on %s; the file format must stay a leaf", pkg)
		}
	}
	// Running git is gitsync's job; the format only reads and writes bytes.
	direct, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(direct)) {
		if pkg == "os/exec" {
			t.Error("gitsync/format imports os/exec; leave running git to gitsync")
		}
	}
}
