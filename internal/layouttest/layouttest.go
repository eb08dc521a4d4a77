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

// gitsyncLayers are gitsync's packages from the bottom up, each with
// what it may build on beyond what the layers below it may: the plumbing
// (git) knows git and the files' stat; the file work (acolytedir) adds
// locks and mapped reads; the layouts (project) build on the files; the
// pre-commit hook on the layouts; gitsync on all of them and the object
// reader; gitsync/hooks on gitsync. No engine or agent package is in any.
var gitsyncLayers = []struct {
	pkg  string
	adds []string
}{
	{"gitsync/internal/git", []string{"gitsync/derive", "gitsync/format", "internal/secrets", "internal/atomicfile",
		"internal/lazyre", "internal/subpath", "memory"}},
	{"gitsync/internal/acolytedir", []string{"gitsync/internal/git", "internal/flock", "internal/mapfile"}},
	{"gitsync/internal/project", []string{"gitsync/internal/acolytedir"}},
	{"gitsync/internal/precommit", []string{"gitsync/internal/project"}},
	{"gitsync", []string{"gitsync/internal/precommit", "gitsync/internal/odb", "internal/beneath"}},
	{"gitsync/hooks", []string{"gitsync"}},
}

// GitsyncLayer is what the gitsync package pkg (relative to Module) may
// build on: what its layer adds to every layer below it.
func GitsyncLayer(t testing.TB, pkg string) []string {
	t.Helper()
	var allowed []string
	for _, l := range gitsyncLayers {
		allowed = append(allowed, l.adds...)
		if l.pkg == pkg {
			return allowed
		}
	}
	t.Fatalf("%s is not one of gitsync's layers (layouttest.gitsyncLayers)", pkg)
	return nil
}
