package cmd

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/internal/ui"
)

func uiCommand() *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: "serve a local web page to browse, search and curate the memories visible here",
		Description: "Listens on 127.0.0.1 only and opens nothing: open the printed URL, whose token works once.\n" +
			"Every change goes through the same checks as acolyte edit and forget, and project changes\n" +
			"land in .acolyte/ at once. Ctrl-C stops it.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "port", Usage: "the port to listen on (default: a free one)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if p := c.Int("port"); p < 0 || p > 65535 {
				return usage(fmt.Errorf("--port %d: give a TCP port, 1 to 65535, or 0 for a free one", p))
			}
			w, err := openWorkspace(c)
			if err != nil {
				return err
			}
			defer w.Close()
			defer fillWhileServing(c.Context, w.Store)()
			defer keepCitedWhileServing(c.Context, w)()
			srv, err := ui.New(uiConfig(w))
			if err != nil {
				return err
			}
			ln, err := srv.Listen(c.Int("port"))
			if err != nil {
				return usage(err)
			}
			if c.Bool("json") {
				if err := printJSON(c, uiJSON{URL: srv.URL()}); err != nil {
					ln.Close()
					return err
				}
			} else {
				fmt.Fprintf(c.App.Writer, "acolyte ui: open %s\n(the token works once; Ctrl-C stops the server)\n", srv.URL())
			}
			return srv.Serve(c.Context, ln)
		},
	}
}

// uiJSON is what ui --json prints (see cmd/JSON.md).
type uiJSON struct {
	URL string `json:"url"`
}

// uiConfig points the page at the workspace every command opens.
func uiConfig(w *workspace) ui.Config {
	cfg := ui.Config{Toolkit: w.Toolkit, State: w.Store, Derived: derive.IsDerived}
	if w.Repo == nil {
		return cfg
	}
	repo := w.Repo
	cfg.Project = repo.Root
	cfg.Origins = func(context.Context) (map[string]ui.Origin, error) {
		d, err := derive.Worktree(repo.Root)
		if err != nil {
			return nil, err
		}
		out := make(map[string]ui.Origin, len(d.Origins))
		for id, o := range d.Origins {
			out[id] = ui.Origin{File: o.File, Line: o.Line}
		}
		return out, nil
	}
	cfg.Stale = w.stale()
	return cfg
}
