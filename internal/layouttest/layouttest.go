// Package layouttest lets a package's tests hold it to its place in the
// layout (docs/ARCHITECTURE.md, "Import rules"): which packages it may build on.
package layouttest

import (
	"os/exec"
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

func goList(t testing.TB, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}
