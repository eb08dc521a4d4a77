package cmd

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"

	"github.com/acolyte-dev/acolyte/memory/team"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/internal/termtext"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show where memory is kept and how many memories this checkout and session can see",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			w, err := openWorkspace(c)
			if err != nil {
				return err
			}
			defer w.Close()
			if w.Workspace != nil {
				// Like every other command: a pull or seed without hooks
				// is counted as soon as it is there.
				if _, err := w.Workspace.Refresh(c.Context); err != nil {
					return err
				}
			}
			counts, err := w.Store.Counts(c.Context, w.Visibility)
			if err != nil {
				return err
			}
			vectors, err := w.Store.VectorModels(c.Context, w.Visibility)
			if err != nil {
				return err
			}
			space := searchSpace(w.Store, counts, vectors)
			st := struct {
				Database string                               `json:"database"`
				Damaged  string                               `json:"damaged,omitempty"`
				ReadOnly string                               `json:"read_only,omitempty"`
				Embedder string                               `json:"embedder"`
				Project  string                               `json:"project,omitempty"`
				Team     string                               `json:"team,omitempty"`
				Counts   map[memory.Scope]map[memory.Kind]int `json:"counts"`
				Vectors  map[memory.Scope]map[string]int      `json:"vectors"`
				spaceStatus
				SentTo []string `json:"text_sent_to"`
			}{w.Store.Path(), w.Store.Damaged(), w.Store.ReadOnly(), embedderName(w.Store), "", "", counts, vectors, space, textSentTo(c)}
			if w.Team != nil {
				// The local store holds no team memories; the team database counts them.
				// Status is about local memory too: a slow team database
				// costs it team.PaceMax at most, and a warning.
				ctx, cancel := context.WithTimeout(c.Context, team.PaceMax)
				team, err := w.Team.Counts(ctx, w.Visibility)
				cancel()
				if err != nil {
					warn(c, warnTeamLeftOut, "team memories are left out: "+err.Error())
				}
				for k := range counts[memory.ScopeTeam] {
					counts[memory.ScopeTeam][k] = team[k]
				}
				st.Team = w.Visibility.Team
			}
			if w.Repo != nil {
				st.Project = w.Repo.Root
			}
			if c.Bool("json") {
				return printJSON(c, st)
			}
			fmt.Fprintf(c.App.Writer, "database  %s\n", st.Database)
			if st.Damaged != "" {
				fmt.Fprintf(c.App.Writer, "damaged   %s; run `acolyte reindex --repair`\n", termtext.EscapeText(st.Damaged))
			}
			if st.ReadOnly != "" {
				fmt.Fprintf(c.App.Writer, "read-only %s (%s): searched and listed, never written\n",
					termtext.EscapeText(filepath.Dir(st.Database)), termtext.EscapeText(st.ReadOnly))
			}
			fmt.Fprintf(c.App.Writer, "embedder  %s\n", st.Embedder)
			if len(st.SentTo) == 0 {
				fmt.Fprintln(c.App.Writer, "text      stays on this machine")
			}
			for _, to := range st.SentTo {
				fmt.Fprintf(c.App.Writer, "text      sent to %s\n", to)
			}
			if st.Project != "" {
				fmt.Fprintf(c.App.Writer, "project   %s\n", st.Project)
			}
			if st.Team != "" {
				fmt.Fprintf(c.App.Writer, "team      %s\n", st.Team)
			}
			for _, sc := range memory.Scopes {
				for _, k := range memory.Kinds {
					if n := counts[sc][k]; n > 0 {
						fmt.Fprintf(c.App.Writer, "%-8s  %-12s %d\n", sc, k, n)
					}
				}
			}
			printVectorModels(c, st.Embedder, space.Instant, vectors)
			printSearchSpace(c, st.Embedder, space)
			return nil
		},
	}
}

// printVectorModels says which model each local scope's vectors come
// from, and what to run when some are not the current embedder's.
func printVectorModels(c *cli.Context, current, instant string, vectors map[memory.Scope]map[string]int) {
	stale := 0
	for _, sc := range memory.Scopes {
		models := vectors[sc]
		names := make([]string, 0, len(models))
		for m := range models {
			names = append(names, m)
		}
		sort.Strings(names)
		for _, m := range names {
			label := m
			switch {
			case m == "":
				label = "no vector"
			case m == instant:
				label = m + " (instant)"
			case m != current:
				label = m + " (not the current embedder)"
			}
			if m != current && m != instant {
				stale += models[m]
			}
			fmt.Fprintf(c.App.Writer, "vectors   %-8s  %d from %s\n", sc, models[m], label)
		}
	}
	if stale > 0 && current != embedderName(nil) {
		fmt.Fprintf(c.App.Writer, "%s found by their words alone until you run `acolyte reindex`\n", plural(stale, "memory is", "memories are"))
	}
}

// spaceStatus says which vectors a search ranks by now (cmd/JSON.md,
// status).
type spaceStatus struct {
	// Instant is a layered embedder's instant model, "" for another
	// embedder.
	Instant string `json:"instant,omitempty"`
	// Pending counts the visible memories without the embedder's own
	// vectors, which the background fill is making.
	Pending int `json:"pending"`
	// SearchVectors is the model whose vectors a search ranks by.
	SearchVectors string `json:"search_vectors"`
}

// searchSpace works out the status's spaceStatus from the visible
// memories' counts and vectors, as a search decides it (sqlite's
// searchSpace): the embedder's space once every memory has its vector.
func searchSpace(s *sqlite.Store, counts map[memory.Scope]map[memory.Kind]int, vectors map[memory.Scope]map[string]int) spaceStatus {
	var st spaceStatus
	if s.Embedder() == nil {
		return st
	}
	model := s.Embedder().Model()
	for sc, kinds := range counts {
		if sc == memory.ScopeTeam {
			continue // the team database's own vectors
		}
		for _, n := range kinds {
			st.Pending += n
		}
		st.Pending -= vectors[sc][model]
	}
	st.Pending = max(st.Pending, 0)
	st.SearchVectors = model
	if s.Instant() != nil {
		st.Instant = s.Instant().Model()
		if st.Pending > 0 {
			st.SearchVectors = st.Instant
		}
	}
	return st
}

// printSearchSpace says which vectors a search ranks by, and when a
// layered embedder's own will take over.
func printSearchSpace(c *cli.Context, model string, st spaceStatus) {
	switch {
	case st.SearchVectors == "":
	case st.Instant != "" && st.Pending > 0:
		fmt.Fprintf(c.App.Writer, "search    by %s until %s %s vectors; they are made in the background, or now by `acolyte reindex`\n",
			st.SearchVectors, plural(st.Pending, "more memory has", "more memories have"), model)
	default:
		fmt.Fprintf(c.App.Writer, "search    by %s\n", st.SearchVectors)
	}
}

func embedderName(s *sqlite.Store) string {
	if s == nil || s.Embedder() == nil {
		return "none (lexical search only)"
	}
	return s.Embedder().Model()
}

// textSentTo lists where memory text leaves this machine for: the
// embedder's service, and the team database for team memories.
func textSentTo(c *cli.Context) []string {
	out := []string{}
	if to := textDestination(c); to != "" {
		out = append(out, to)
	}
	if dsn, _, err := teamSettings(c); err == nil && dsn != "" {
		where := "the team database"
		// Only the host: the URL may hold a password.
		if u, err := url.Parse(dsn); err == nil && u.Host != "" {
			where += " at " + u.Host
		}
		out = append(out, where+", for team memories")
	}
	return out
}
