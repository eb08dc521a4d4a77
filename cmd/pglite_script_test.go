package cmd_test

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/acolyte-dev/acolyte/internal/pgtest"
)

// TestPGliteScripts runs the scripts of testdata/pglite against PGlite,
// PostgreSQL 17 with pgvector, a fresh server per script. PGlite serves
// one connection at a time, so they prove each command gets by with a
// pool of one (TEAM_DB carries pool_max_conns=1). Roles and row-level
// security are the Debian server's scripts' (testdata/team).
func TestPGliteScripts(t *testing.T) {
	// Not t.Parallel: a search waits at most a second for the team (the
	// pace's PaceMax), and beside the parallel suites a loaded machine's
	// connection to the team database took longer (team.txtar failed so).
	if !pgtest.PGliteAvailable() {
		t.Skip(pgtest.PGliteEnv + " is not set: set it to 1 to run the team scripts on PGlite")
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "pglite"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("TEAM_DB", pgtest.StartPGlite(env.T().(testing.TB)))
			isolate(env)
			return nil
		},
		RequireExplicitExec: true,
	})
}
