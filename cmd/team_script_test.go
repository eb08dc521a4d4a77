package cmd_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/acolyte-dev/acolyte/internal/pgtest"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// TestTeamScripts runs the scripts of testdata/team against a real
// PostgreSQL server: one server, a fresh database per script, and two
// login roles, alice and dave in team red and bob in team blue. Scripts
// get ADMIN_DB (the superuser, for team init), ALICE_DB, DAVE_DB, BOB_DB
// and CAROL_DB (carol, in no team).
func TestTeamScripts(t *testing.T) {
	// Not t.Parallel: a search waits at most a second for the team (the
	// pace's PaceMax), and beside the parallel suites a loaded machine's
	// connection to the team database took longer (team.txtar failed so).
	srv := pgtest.Start(t)
	for _, team := range []string{"red", "blue"} {
		if _, err := postgres.Init(t.Context(), srv.URL("postgres", "postgres"), team); err != nil {
			t.Fatal(err)
		}
	}
	srv.Admin(t, "postgres",
		"CREATE ROLE alice LOGIN", "GRANT acolyte_team_red TO alice",
		"CREATE ROLE dave LOGIN", "GRANT acolyte_team_red TO dave",
		"CREATE ROLE bob LOGIN", "GRANT acolyte_team_blue TO bob",
		// carol starts in no team; admin.txtar grants and revokes her.
		"CREATE ROLE carol LOGIN")
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "team"),
		Setup: func(env *testscript.Env) error {
			db := srv.NewDatabase(env.T().(testing.TB))
			env.Setenv("ADMIN_DB", srv.URL("postgres", db))
			env.Setenv("ALICE_DB", srv.URL("alice", db))
			env.Setenv("DAVE_DB", srv.URL("dave", db))
			env.Setenv("BOB_DB", srv.URL("bob", db))
			env.Setenv("CAROL_DB", srv.URL("carol", db))
			isolate(env)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// sql STATEMENT runs a statement as the superuser in the
			// script's database, to set up what acolyte itself does not.
			"sql": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: sql STATEMENT")
				}
				conn, err := pgx.Connect(context.Background(), ts.Getenv("ADMIN_DB"))
				ts.Check(err)
				defer conn.Close(context.Background())
				_, err = conn.Exec(context.Background(), args[0])
				if neg != (err != nil) {
					ts.Fatalf("sql %s: %v", args[0], err)
				}
			},
			// setenvfile NAME FILE sets NAME to FILE's trimmed content,
			// e.g. the id remember printed.
			"setenvfile": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: setenvfile NAME FILE")
				}
				ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile(args[1])))
			},
		},
		RequireExplicitExec: true,
	})
}
