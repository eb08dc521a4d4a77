package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
	return append([]cli.Flag{
		&cli.StringFlag{Name: flagHome, EnvVars: []string{"ACOLYTE_HOME"}, Usage: "where acolyte keeps its database and config (default: $XDG_DATA_HOME/acolyte)"},
		&cli.StringFlag{Name: flagSession, EnvVars: []string{"ACOLYTE_SESSION"}, Usage: "session id for session-scope memories"},
		&cli.StringFlag{Name: flagRepo, Usage: "run as if started in this directory (default: the current directory)"},
	}, embedderFlags()...)
}

// global reads a global setting wherever it was given: a flag before the
// command (acolyte --repo D search) or after it (acolyte search --repo D),
// its environment variable, or the same key in $ACOLYTE_HOME/config.json.
func global(c *cli.Context, name string) string {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet(name) {
			return ctx.String(name)
		}
	}
	if name != flagHome && name != flagRepo {
		if v := configValue(c, name); v != "" {
			return v
		}
	}
	if name == flagRepo {
		return "."
	}
	return ""
}

// settings is $ACOLYTE_HOME/config.json, a flat object of setting names to
// strings, e.g. {"embedder": "openai", "embed-model": "nomic-embed-text"}.
// It is read once per process and kept on the App.
type settings struct {
	values map[string]string
	// err is why config.json could not be used; acolyte status reports it.
	err error
}

const settingsKey = "settings"

func loadSettings(c *cli.Context) *settings {
	if st, ok := c.App.Metadata[settingsKey].(*settings); ok {
		return st
	}
	st := &settings{}
	if dir, err := home(c); err == nil {
		path := filepath.Join(dir, "config.json")
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			st.err = err
		default:
			if err := json.Unmarshal(b, &st.values); err != nil {
				st.err = fmt.Errorf("%s is ignored: %w; it must be a flat JSON object of strings, e.g. {\"embedder\": \"static\"}", path, err)
			}
		}
	}
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	c.App.Metadata[settingsKey] = st
	return st
}

func configValue(c *cli.Context, name string) string {
	return loadSettings(c).values[name]
}

// home is acolyte's data directory: $ACOLYTE_HOME, else the XDG data dir.
func home(c *cli.Context) (string, error) {
	if h := global(c, flagHome); h != "" {
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
	// Repo and Workspace are nil outside a git repository.
	Repo      *gitsync.Repo
	Workspace *gitsync.Workspace
}

func (w *workspace) Close() error { return w.Store.Close() }

// needRepo opens the workspace of a command that only makes sense in a repository.
func needRepo(c *cli.Context) (*workspace, error) {
	w, err := openWorkspace(c)
	if err != nil {
		return nil, err
	}
	if w.Workspace == nil {
		w.Close()
		return nil, usage(fmt.Errorf("%w: %s; run inside a repository or pass --repo DIR", gitsync.ErrNotRepo, w.Root))
	}
	return w, nil
}

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
	dir, err := filepath.Abs(global(c, flagRepo))
	if err != nil {
		s.Close()
		return nil, usage(err)
	}
	w := &workspace{Store: s, Root: dir}
	repo, err := gitsync.Discover(dir)
	switch {
	case err == nil:
		w.Repo, w.Root = repo, repo.Root
		w.Workspace = gitsync.NewWorkspace(repo, s, global(c, flagSession))
		w.Workspace.Warn = func(msg string) { fmt.Fprintln(c.App.ErrWriter, "warning:", msg) }
		w.Toolkit = w.Workspace
	case errors.Is(err, gitsync.ErrNotRepo):
		w.Toolkit = memory.Scoped{Store: s, Visibility: memory.Visibility{SessionKey: global(c, flagSession)}}
	default:
		s.Close()
		return nil, fail(err)
	}
	return w, nil
}
