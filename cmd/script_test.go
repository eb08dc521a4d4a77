package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/acolyte-dev/acolyte/cmd"
)

// TestMain lets the test binary act as the acolyte command, so every script
// runs real acolyte subprocesses.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"acolyte": func() {
			os.Exit(cmd.Main(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// isolate gives a script its own acolyte home and settings, no API key, a git identity
// and no system git config, so nothing of the machine's reaches it.
func isolate(env *testscript.Env) {
	env.Setenv("ACOLYTE_HOME", filepath.Join(env.WorkDir, ".acolyte-home"))
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
	env.Setenv("GEMINI_API_KEY", "")
	env.Setenv("GOOGLE_API_KEY", "")
	env.Setenv("GIT_AUTHOR_NAME", "Test")
	env.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
	env.Setenv("GIT_COMMITTER_NAME", "Test")
	env.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
	env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			isolate(env)
			env.Setenv("PATH_SAVED", env.Getenv("PATH"))
			return nil
		},
		RequireExplicitExec: true,
	})
}
