// Package layouttest lets a package's tests hold it to its place in the
// layout (docs/ARCHITECTURE.md, "Import rules"): which packages it may build on.
package layouttest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Module is the import path prefix of this module's packages.
const Module = "github.com/acolyte-dev/acolyte/"

// Deps lists the packages the package in the test's directory builds on,
// directly or not, itself included; its tests' imports are not counted.
func Deps(t testing.TB) []string {
	return goList(t, "-deps", "-f", "{{.ImportPath}}", ".")
}

// Imports lists the packages the package in the test's directory imports
// directly.
func Imports(t testing.TB) []string {
	return goList(t, "-f", `{{join .Imports " "}}`, ".")
}

// DependsOnlyOn fails the test for each package of this module that the
// package in the test's directory builds on, other than itself and those
// allowed (paths relative to Module), and for each database driver it
// builds on: name is how the failures call the package.
func DependsOnlyOn(t testing.TB, name string, allowed ...string) {
	t.Helper()
	for _, pkg := range Deps(t) {
		rel, ours := strings.CutPrefix(pkg, Module)
		if ours && rel != name && !slices.Contains(allowed, rel) {
			t.Errorf("%s depends on %s", name, pkg)
		}
		if strings.HasPrefix(pkg, "modernc.org/sqlite") || strings.HasPrefix(pkg, "github.com/jackc/pgx") {
			t.Errorf("%s depends on the database driver %s", name, pkg)
		}
	}
}

func goList(t testing.TB, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}

// GitsyncBuildsOn is what gitsync may build on (paths relative to
// Module): its own packages, memory, and internal helpers, never an
// engine or the agent. gitsync/hooks, which builds on gitsync, is held to
// it too.
func GitsyncBuildsOn() []string {
	return []string{
		"gitsync/format", "gitsync/derive",
		"gitsync/internal/git", "gitsync/internal/acolytedir", "gitsync/internal/project",
		"gitsync/internal/precommit", "gitsync/internal/odb",
		"internal/secrets", "internal/atomicfile", "internal/flock", "internal/mapfile",
		"internal/subpath", "internal/beneath", "internal/lazyre",
		"memory",
	}
}
