package acolytedir

import (
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// The .acolyte/ files are read, written and trusted unread here, with no
// index and no layout's logic: the layouts above build on this package,
// never the other way round, and it runs no git (its stamps come from
// package git).
func TestAcolytedirIsFileWork(t *testing.T) {
	const module = layouttest.Module
	allowed := map[string]bool{
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
			t.Errorf("gitsync/internal/acolytedir depends on %s", pkg)
		}
	}
	if slices.Contains(layouttest.Imports(t), "os/exec") {
		t.Error("gitsync/internal/acolytedir imports os/exec; running git is package git's job")
	}
}
