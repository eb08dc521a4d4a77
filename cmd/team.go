package cmd

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/memory/postgres"
)

func teamCommand() *cli.Command {
	return &cli.Command{
		Name:  "team",
		Usage: "set up the team database, where team memories are shared live",
		Subcommands: []*cli.Command{{
			Name: "init",
			Usage: "create or migrate the team schema in --team-db, and the group role of --team when it names one; " +
				"run it as a role that may create tables (and roles)",
			Flags: []cli.Flag{jsonFlag},
			Action: func(c *cli.Context) error {
				url, team := global(c, flagTeamDB), global(c, flagTeam)
				if url == "" {
					return usage(errors.New("team init needs the team database; pass --team-db URL or set ACOLYTE_TEAM_DB"))
				}
				r, err := postgres.Init(c.Context, url, team)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(c, teamInitJSON{r.From, r.To, r.TeamRole, r.Vector})
				}
				out := c.App.Writer
				if r.From == r.To {
					fmt.Fprintf(out, "team schema up to date at version %d\n", r.To)
				} else {
					fmt.Fprintf(out, "team schema migrated from version %d to %d\n", r.From, r.To)
				}
				if r.TeamRole != "" {
					fmt.Fprintf(out, "created role %s; give each member's database role access with: GRANT %s TO <role>;\n",
						r.TeamRole, pgx.Identifier{r.TeamRole}.Sanitize())
				}
				if r.Vector {
					fmt.Fprintln(out, "vector extension: available, not yet used; vectors are compared by acolyte")
				} else {
					fmt.Fprintln(out, "vector extension: not available on this server; vectors are compared by acolyte")
				}
				return nil
			},
		}},
	}
}

// teamInitJSON is what team init --json prints (see cmd/JSON.md).
type teamInitJSON struct {
	From     int    `json:"from"`
	To       int    `json:"to"`
	TeamRole string `json:"team_role,omitempty"`
	Vector   bool   `json:"vector"`
}
