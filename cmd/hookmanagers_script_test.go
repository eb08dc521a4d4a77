package cmd_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// requireHookManagers makes a missing hook manager fail the suite instead of
// skipping it; .ci/run sets it after installing them.
const requireHookManagers = "ACOLYTE_REQUIRE_HOOK_MANAGERS"

// TestHookManagerScripts drives the real hook managers (testdata/hookmanagers):
// husky 9, lefthook 2 and simple-git-hooks from the npm packages pinned in
// testdata/hookmanagers/npm (npm ci --ignore-scripts there), and the
// pre-commit framework from PATH (Debian's 3.0.4; .ci/run runs the
// pre-commit scripts again with 4.7.0 first on PATH). Each script installs
// acolyte beside a team's hooks, commits, merges, checks out and reinstalls
// the manager, and checks from two logs that the team's hooks and acolyte
// both ran every time. `acolyte` on the scripts' PATH is a wrapper that logs
// each call to $ACOLYTE_LOG, then runs the real one.
func TestHookManagerScripts(t *testing.T) {
	// Its scripts are isolated like TestScripts' and run beside them.
	t.Parallel()
	bin, err := filepath.Abs(filepath.Join("testdata", "hookmanagers", "npm", "node_modules", ".bin"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tool := range []string{"husky", "lefthook", "simple-git-hooks"} {
		_, err := os.Stat(filepath.Join(bin, tool))
		have[tool] = err == nil
	}
	_, err = exec.LookPath("pre-commit")
	have["pre-commit"] = err == nil
	// pre-commit 3.2 renamed the commit stage pre-commit; 4.x warns on the
	// old name, 3.0 and 3.1 reject the new one.
	have["pre-commit-3.2"], have["pre-commit-4"] = false, false
	if out, err := exec.Command("pre-commit", "--version").Output(); err == nil {
		var major, minor int
		if _, err := fmt.Sscanf(strings.TrimPrefix(strings.TrimSpace(string(out)), "pre-commit "), "%d.%d", &major, &minor); err == nil {
			have["pre-commit-3.2"] = major > 3 || major == 3 && minor >= 2
			have["pre-commit-4"] = major >= 4
		}
	}
	// A mixed team: pre-commit 3.0 or 3.1 on PATH, 4.x in the folder
	// precommit4 names (pre-commit-mixed.txtar runs both).
	pc4 := os.Getenv(precommit4)
	old := preCommitMajorMinor(withoutDir(os.Getenv("PATH"), pc4))
	have["pre-commit-mixed"] = pc4 != "" && preCommitMajorMinor(pc4) >= 400 && old >= 300 && old < 302
	for tool, ok := range have {
		if !ok && !strings.HasPrefix(tool, "pre-commit-") && os.Getenv(requireHookManagers) == "1" {
			t.Errorf("%s is not installed and %s=1: run npm ci --ignore-scripts in cmd/testdata/hookmanagers/npm, and apt-get install pre-commit", tool, requireHookManagers)
		}
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "hookmanagers"),
		Condition: func(cond string) (bool, error) {
			ok, known := have[cond]
			if !known {
				return false, os.ErrNotExist
			}
			return ok, nil
		},
		Setup: func(env *testscript.Env) error {
			// testscript puts the test binary on the scripts' PATH as acolyte.
			real := ""
			for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
				if p := filepath.Join(dir, "acolyte"); fileExists(p) {
					real = p
					break
				}
			}
			if real == "" {
				return errors.New("testscript put no acolyte on PATH")
			}
			wrapper := filepath.Join(env.WorkDir, ".bin")
			if err := os.MkdirAll(wrapper, 0o755); err != nil {
				return err
			}
			script := "#!/bin/sh\necho \"$*\" >> \"$ACOLYTE_LOG\"\nexec '" + real + "' \"$@\"\n"
			if err := os.WriteFile(filepath.Join(wrapper, "acolyte"), []byte(script), 0o755); err != nil {
				return err
			}
			// A teammate who does not use acolyte: the managers, git and the
			// system's tools, and no acolyte anywhere on PATH.
			mate := []string{bin}
			for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
				if !fileExists(filepath.Join(dir, "acolyte")) {
					mate = append(mate, dir)
				}
			}
			env.Setenv("TEAMMATE_PATH", strings.Join(mate, string(os.PathListSeparator)))
			if pc4 != "" {
				sep := string(os.PathListSeparator)
				without := withoutDir(wrapper+sep+bin+sep+env.Getenv("PATH"), pc4)
				env.Setenv("PRECOMMIT3_PATH", without)
				env.Setenv("PRECOMMIT4_PATH", pc4+sep+without)
				mates := withoutDir(strings.Join(mate, sep), pc4)
				env.Setenv("TEAMMATE3_PATH", mates)
				env.Setenv("TEAMMATE4_PATH", pc4+sep+mates)
			}
			env.Setenv("PATH", wrapper+string(os.PathListSeparator)+bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("ACOLYTE_LOG", filepath.Join(env.WorkDir, "acolyte.log"))
			env.Setenv("TEAM_LOG", filepath.Join(env.WorkDir, "team.log"))
			env.Setenv("PRE_COMMIT_HOME", filepath.Join(env.WorkDir, ".pre-commit-home"))
			isolate(env)
			return nil
		},
		RequireExplicitExec: true,
	})
}

// precommit4 names a folder with pre-commit 4.x in it (a venv's bin),
// for the scripts that need a second pre-commit; .ci/run sets it.
const precommit4 = "ACOLYTE_PRECOMMIT4"

// preCommitMajorMinor is the version of the first pre-commit on path, as
// major*100+minor; 0 when there is none.
func preCommitMajorMinor(path string) int {
	for _, dir := range filepath.SplitList(path) {
		exe := filepath.Join(dir, "pre-commit")
		if !fileExists(exe) {
			continue
		}
		out, err := exec.Command(exe, "--version").Output()
		var major, minor int
		if err != nil {
			return 0
		}
		if _, err := fmt.Sscanf(strings.TrimPrefix(strings.TrimSpace(string(out)), "pre-commit "), "%d.%d", &major, &minor); err != nil {
			return 0
		}
		return major*100 + minor
	}
	return 0
}

// withoutDir is the PATH list without dir.
func withoutDir(list, dir string) string {
	var out []string
	for _, d := range filepath.SplitList(list) {
		if filepath.Clean(d) != filepath.Clean(dir) {
			out = append(out, d)
		}
	}
	return strings.Join(out, string(os.PathListSeparator))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
