package acolytedir

import (
	"slices"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/layouttest"
)

// The .acolyte/ files are read, written and trusted unread here, with no
// index and no layout's logic: the layouts above build on this package,
// never the other way round, and it runs no git (its stamps come from
// package git).
func TestAcolytedirIsFileWork(t *testing.T) {
	layouttest.DependsOnlyOn(t, "gitsync/internal/acolytedir", layouttest.GitsyncLayer(t, "gitsync/internal/acolytedir")...)
	if slices.Contains(layouttest.Imports(t), "os/exec") {
		t.Error("gitsync/internal/acolytedir imports os/exec; running git is package git's job")
	}
}
