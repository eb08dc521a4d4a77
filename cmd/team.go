package cmd

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/memory"
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
					return printJSON(c, teamInitJSON{r.From, r.To, r.TeamRole, r.Vector, r.VectorEnabled})
				}
				out := c.App.Writer
				if r.From == r.To {
					fmt.Fprintf(out, "team schema up to date at version %d\n", r.To)
				} else {
					fmt.Fprintf(out, "team schema migrated from version %d to %d\n", r.From, r.To)
				}
				if r.TeamRole != "" {
					fmt.Fprintf(out, "created role %s; give each member's database role access with: acolyte team grant ROLE --team %s\n",
						r.TeamRole, team)
				}
				switch {
				case r.VectorEnabled:
					fmt.Fprintln(out, "vector extension: enabled; large teams find nearest vectors through an HNSW index per embedding model")
				case r.Vector:
					fmt.Fprintln(out, "vector extension: available, but this role may not create it; run team init as a role that may (or CREATE EXTENSION vector); until then search uses acolyte's own vector cells")
				default:
					fmt.Fprintln(out, "vector extension: not available on this server; search uses acolyte's own vector cells (see team status)")
				}
				return nil
			},
		}, {
			Name: "status",
			Usage: "show the team database's server and pgvector versions, its schema version, and the memories and " +
				"embedding models of each team this role can see",
			Flags: []cli.Flag{jsonFlag},
			Action: func(c *cli.Context) error {
				url := global(c, flagTeamDB)
				if url == "" {
					return usage(errors.New("team status needs the team database; pass --team-db URL or set ACOLYTE_TEAM_DB"))
				}
				st, err := postgres.ReadStatus(c.Context, url)
				if err != nil {
					return err
				}
				js := teamStatusJSON{Server: st.Server, Vector: st.Vector, VectorVersion: st.VectorVersion, Search: st.Search,
					Schema: st.Schema, SchemaKnown: st.Known, Teams: []teamCountsJSON{}}
				for _, t := range st.Teams {
					counts := map[memory.Kind]int{}
					for _, k := range memory.Kinds {
						counts[k] = t.Counts[k]
					}
					js.Teams = append(js.Teams, teamCountsJSON{Team: t.Team, Counts: counts, Vectors: t.Models})
				}
				if c.Bool("json") {
					return printJSON(c, js)
				}
				out := c.App.Writer
				fmt.Fprintf(out, "server    PostgreSQL %s\n", st.Server)
				if st.VectorVersion != "" {
					fmt.Fprintf(out, "pgvector  %s %s\n", st.VectorVersion, st.Vector)
				} else {
					fmt.Fprintf(out, "pgvector  %s\n", st.Vector)
				}
				fmt.Fprintf(out, "search    %s\n", st.Search)
				switch {
				case st.Schema == 0:
					fmt.Fprintf(out, "schema    none; run `acolyte team init` (this acolyte's is version %d)\n", st.Known)
				case st.Schema < st.Known:
					fmt.Fprintf(out, "schema    version %d; run `acolyte team init` to migrate it to %d\n", st.Schema, st.Known)
				case st.Schema > st.Known:
					fmt.Fprintf(out, "schema    version %d, newer than this acolyte's %d; upgrade acolyte\n", st.Schema, st.Known)
				default:
					fmt.Fprintf(out, "schema    version %d\n", st.Schema)
				}
				if st.Schema >= 1 && len(st.Teams) == 0 {
					fmt.Fprintln(out, "teams     none visible to this role (no memories yet, or no team role granted)")
				}
				for _, t := range js.Teams {
					var parts []string
					for _, k := range memory.Kinds {
						parts = append(parts, fmt.Sprintf("%d %s", t.Counts[k], k))
					}
					fmt.Fprintf(out, "team %s  %s\n", t.Team, strings.Join(parts, ", "))
					models := slices.Sorted(maps.Keys(t.Vectors))
					for _, m := range models {
						fmt.Fprintf(out, "  vectors %s: %d\n", m, t.Vectors[m])
					}
				}
				return nil
			},
		}, membershipCommand(true), membershipCommand(false)},
	}
}

// membershipCommand is team grant (grant true) or team revoke.
func membershipCommand(grant bool) *cli.Command {
	name, usageText := "grant", "let database role ROLE read and write the team's memories (GRANT the team's group role TO ROLE)"
	if !grant {
		name, usageText = "revoke", "take the team's memories away from database role ROLE (REVOKE the team's group role FROM ROLE)"
	}
	return &cli.Command{
		Name:      name,
		Usage:     usageText + "; run it as the role that ran team init, or one that may manage roles",
		ArgsUsage: "ROLE",
		Flags:     []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			// The documented form puts the flags after ROLE (team grant
			// alice --team platform); interspersed reads them there.
			url, team, asJSON := global(c, flagTeamDB), global(c, flagTeam), c.Bool("json")
			args := c.Args().Slice()
			switch {
			case len(args) != 1:
				return usage(fmt.Errorf("team %s takes one database role: acolyte team %s ROLE --team NAME", name, name))
			case url == "":
				return usage(fmt.Errorf("team %s needs the team database; pass --team-db URL or set ACOLYTE_TEAM_DB", name))
			case team == "":
				return usage(fmt.Errorf("team %s needs the team; pass --team NAME or set ACOLYTE_TEAM", name))
			}
			role := args[0]
			change := postgres.Revoke
			if grant {
				change = postgres.Grant
			}
			changed, err := change(c.Context, url, team, role)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(c, teamMembershipJSON{Team: team, Role: role, Member: grant, Changed: changed})
			}
			group := pgx.Identifier{postgres.TeamRole(team)}.Sanitize()
			switch {
			case grant && changed:
				fmt.Fprintf(c.App.Writer, "granted %s to %s: it now reads and writes team %s's memories\n", group, role, team)
			case grant:
				fmt.Fprintf(c.App.Writer, "%s is already a member of team %s\n", role, team)
			case changed:
				fmt.Fprintf(c.App.Writer, "revoked %s from %s: it no longer sees team %s's memories\n", group, role, team)
			default:
				fmt.Fprintf(c.App.Writer, "%s was not a member of team %s\n", role, team)
			}
			return nil
		},
	}
}

// teamStatusJSON is what team status --json prints (see cmd/JSON.md).
type teamStatusJSON struct {
	Server        string           `json:"server"`
	Vector        string           `json:"vector"`
	VectorVersion string           `json:"vector_version,omitempty"`
	Search        string           `json:"search"`
	Schema        int              `json:"schema"`
	SchemaKnown   int              `json:"schema_known"`
	Teams         []teamCountsJSON `json:"teams"`
}

type teamCountsJSON struct {
	Team    string              `json:"team"`
	Counts  map[memory.Kind]int `json:"counts"`
	Vectors map[string]int      `json:"vectors"`
}

// teamMembershipJSON is what team grant and team revoke --json print.
type teamMembershipJSON struct {
	Team    string `json:"team"`
	Role    string `json:"role"`
	Member  bool   `json:"member"`
	Changed bool   `json:"changed"`
}

// teamInitJSON is what team init --json prints (see cmd/JSON.md).
type teamInitJSON struct {
	From     int    `json:"from"`
	To       int    `json:"to"`
	TeamRole string `json:"team_role,omitempty"`
	Vector   bool   `json:"vector"`
	// VectorEnabled: init enabled pgvector, with an HNSW index per model.
	VectorEnabled bool `json:"vector_enabled"`
}
