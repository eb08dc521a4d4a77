package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/memory"
)

// Names of the global flags, shared by every command that reads them.
const (
	flagHome     = "home"
	flagEmbedder = "embedder"
	flagSession  = "session"
	flagRepo     = "repo"
)

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: flagHome, EnvVars: []string{"ACOLYTE_HOME"}, Usage: "where acolyte keeps its database and config (default: $XDG_DATA_HOME/acolyte)"},
		&cli.StringFlag{Name: flagEmbedder, EnvVars: []string{"ACOLYTE_EMBEDDER"}, Usage: "embedder: static (built in, offline), gemini or openai (default: gemini when a key is set, else static)"},
		&cli.StringFlag{Name: flagSession, EnvVars: []string{"ACOLYTE_SESSION"}, Usage: "session id for session-scope memories"},
		&cli.StringFlag{Name: flagRepo, Usage: "run as if started in this directory", Value: "."},
	}
}

// home is acolyte's data directory: $ACOLYTE_HOME, else the XDG data dir.
func home(c *cli.Context) (string, error) {
	if h := c.String(flagHome); h != "" {
		return filepath.Abs(h)
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "acolyte"), nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", usage(fmt.Errorf("cannot find a home directory; set ACOLYTE_HOME: %w", err))
	}
	return filepath.Join(h, ".local", "share", "acolyte"), nil
}

// workspace is what most commands work in: the store, the repository (when
// there is one) and the toolkit that writes through to .acolyte/.
type workspace struct {
	Toolkit memory.Toolkit
	Store   *memory.Store
	// Root is the repository's working tree, or the directory acolyte runs
	// in when there is no repository.
	Root string
	// Repo is nil outside a git repository.
	Repo *gitsync.Repo
}

func (w *workspace) Close() error { return w.Store.Close() }

// openStore opens the database with the configured embedder.
func openStore(c *cli.Context) (*memory.Store, error) {
	dir, err := home(c)
	if err != nil {
		return nil, err
	}
	e, err := chooseEmbedder(c)
	if err != nil {
		return nil, err
	}
	s, err := memory.Open(c.Context, filepath.Join(dir, "acolyte.db"), e)
	if err != nil {
		return nil, fail(err)
	}
	return s, nil
}

// openWorkspace opens the store and, inside a repository, binds it to the
// project so project memories are visible and written through to .acolyte/.
func openWorkspace(c *cli.Context) (*workspace, error) {
	s, err := openStore(c)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(c.String(flagRepo))
	if err != nil {
		s.Close()
		return nil, usage(err)
	}
	w := &workspace{Store: s, Root: dir}
	vis := memory.Visibility{SessionKey: c.String(flagSession)}
	repo, err := gitsync.Discover(dir)
	switch {
	case err == nil:
		w.Repo, w.Root = repo, repo.Root
		vis.ProjectKey = repo.Root
	case errors.Is(err, gitsync.ErrNotRepo):
	default:
		s.Close()
		return nil, fail(err)
	}
	w.Toolkit = memory.Scoped{Store: s, Visibility: vis}
	return w, nil
}
