package cmd

import (
	"fmt"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/memory"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show where memory is kept and how much of it there is",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			w, err := openWorkspace(c)
			if err != nil {
				return err
			}
			defer w.Close()
			if err := loadSettings(c).err; err != nil {
				return usage(err)
			}
			counts, err := w.Store.Counts(c.Context)
			if err != nil {
				return fail(err)
			}
			st := struct {
				Database string                               `json:"database"`
				Embedder string                               `json:"embedder"`
				Project  string                               `json:"project,omitempty"`
				Counts   map[memory.Scope]map[memory.Kind]int `json:"counts"`
			}{w.Store.Path(), embedderName(w.Store), "", counts}
			if w.Repo != nil {
				st.Project = w.Repo.Root
			}
			if c.Bool("json") {
				return printJSON(c, st)
			}
			fmt.Fprintf(c.App.Writer, "database  %s\nembedder  %s\n", st.Database, st.Embedder)
			if st.Project != "" {
				fmt.Fprintf(c.App.Writer, "project   %s\n", st.Project)
			}
			for _, sc := range memory.Scopes {
				kinds := make([]string, 0, len(counts[sc]))
				for k := range counts[sc] {
					kinds = append(kinds, string(k))
				}
				sort.Strings(kinds)
				for _, k := range kinds {
					fmt.Fprintf(c.App.Writer, "%-8s  %-12s %d\n", sc, k, counts[sc][memory.Kind(k)])
				}
			}
			return nil
		},
	}
}

func embedderName(s *memory.Store) string {
	if s.Embedder() == nil {
		return "none (lexical search only)"
	}
	return s.Embedder().Model()
}
