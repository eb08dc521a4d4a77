package format

import (
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// The format is a leaf: the merge driver and `acolyte check` read and write
// the file without git, the index or the rest of gitsync, and gitsync builds
// on the format, never the other way round.
func TestFormatImportsNeitherGitsyncNorGit(t *testing.T) {
	const module = layouttest.Module
	allowed := map[string]bool{
		module + "gitsync/format":      true,
		module + "internal/secrets":    true,
		module + "internal/lazyre":     true,
		module + "internal/atomicfile": true,
		module + "memory":              true,
	}
	for _, pkg := range layouttest.Deps(t) {
		if strings.HasPrefix(pkg, module) && !allowed[pkg] {
			t.Errorf("gitsync/format depends on %s; the file format must stay a leaf", pkg)
		}
	}
	// Running git is gitsync's job; the format only reads and writes bytes.
	if slices.Contains(layouttest.Imports(t), "os/exec") {
		t.Error("gitsync/format imports os/exec; leave running git to gitsync")
	}
}
