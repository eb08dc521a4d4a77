package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acolyte-dev/acolyte/internal/configfile"
	"github.com/acolyte-dev/acolyte/internal/stalememo"
	"github.com/acolyte-dev/acolyte/memory/team"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/gitsync/hooks"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/postgres"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// Names of the global flags, shared by every command that reads them.
const (
	flagHome     = "home"
	flagEmbedder = "embedder"
	flagSession  = "session"
	flagRepo     = "repo"
	flagTeamDB   = "team-db"
	flagTeam     = "team"
)

func globalFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: flagHome, EnvVars: []string{"ACOLYTE_HOME"}, Usage: "where acolyte keeps its database (default: $XDG_DATA_HOME/acolyte; settings live in $XDG_CONFIG_HOME/acolyte/config.json)"},
		&cli.StringFlag{Name: flagSession, EnvVars: []string{"ACOLYTE_SESSION"}, Usage: "session id for session-scope memories"},
		&cli.StringFlag{Name: flagTeamDB, EnvVars: []string{"ACOLYTE_TEAM_DB"}, Usage: "the team database, a PostgreSQL `URL` (the PG* variables and ~/.pgpass fill in what it leaves out); enables the team scope"},
		&cli.StringFlag{Name: flagTeam, EnvVars: []string{"ACOLYTE_TEAM"}, Usage: "your team's `NAME` in the team database"},
		&cli.StringFlag{Name: flagRepo, Usage: "work in the git checkout containing `DIR`, which must exist and be in one (default: the current directory; outside a repository only user and session memories are used)"},
	}, embedderFlags()...)
}

// global reads a global setting wherever it was given: a flag before the
// command (acolyte --repo D search) or after it (acolyte search --repo D),
// its environment variable, or the same key in config.json (settingsFile).
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

// settings is config.json (settingsFile), a flat object of setting names to
// strings, e.g. {"embedder": "openai", "embed-model": "nomic-embed-text"}.
// It is read once per process and kept on the App.
type settings struct {
	values map[string]string
	// err is why config.json cannot be used; every command refuses to run
	// then, rather than silently run with other settings than the user wrote.
	err error
}

const settingsKey = "settings"

func loadSettings(c *cli.Context) *settings {
	if st, ok := c.App.Metadata[settingsKey].(*settings); ok {
		return st
	}
	st := &settings{}
	if path, err := settingsFile(c); err != nil {
		st.err = err
	} else if path != "" {
		b, err := os.ReadFile(path)
		switch {
		case err != nil:
			st.err = usage(fmt.Errorf("read the settings: %w", err))
		default:
			if st.values, st.err = configfile.Parse(path, b, settingNames(), func(typed string) string {
				return nearestName(typed, settingNames())
			}); st.err != nil {
				st.err = usage(st.err)
			}
		}
	}
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	c.App.Metadata[settingsKey] = st
	return st
}

// configDir is where acolyte's settings live: $XDG_CONFIG_HOME/acolyte
// (~/.config/acolyte; os.UserConfigDir's place on macOS and Windows).
func configDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", usage(fmt.Errorf("cannot find the configuration directory; set XDG_CONFIG_HOME: %w", err))
	}
	return filepath.Join(dir, "acolyte"), nil
}

// settingsFile is the config.json to read, "" when there is none: the one
// in configDir, else the one in the data directory, where acolyte kept it
// before, with a note on stderr to move it.
func settingsFile(c *cli.Context) (string, error) {
	dir, err := configDir()
	if err != nil {
		return "", err
	}
	current := filepath.Join(dir, "config.json")
	legacy := ""
	if data, err := home(c); err == nil {
		legacy = filepath.Join(data, "config.json")
	}
	_, currentErr := os.Stat(current)
	_, legacyErr := os.Stat(legacy)
	switch {
	case currentErr == nil && legacyErr == nil && legacy != current:
		fmt.Fprintf(c.App.ErrWriter, "note: %s is not read, %s is; move what it holds there and remove it\n", legacy, current)
		return current, nil
	case currentErr == nil || !errors.Is(currentErr, fs.ErrNotExist):
		return current, nil // an unreadable one is reported by the read
	case legacyErr == nil:
		fmt.Fprintf(c.App.ErrWriter, "note: reading the settings from %s, where acolyte kept them before; move them to %s (mkdir -p %s && mv %s %s)\n",
			legacy, current, dir, legacy, current)
		return legacy, nil
	}
	return "", nil
}

// checkSettings stops a command when config.json is unusable.
func checkSettings(c *cli.Context) error {
	return loadSettings(c).err
}

// settingNames are the keys config.json may hold: the global flags, less
// those that say where to look (home, repo), and the agent's settings.
func settingNames() []string {
	var out []string
	for _, f := range globalFlags() {
		if n := f.Names()[0]; n != flagHome && n != flagRepo {
			out = append(out, n)
		}
	}
	return append(out, agentSettingNames()...)
}

// nearestName is the name in names closest to typed, if one is close.
func nearestName(typed string, names []string) string {
	cmds := make([]*cli.Command, len(names))
	for i, n := range names {
		cmds[i] = &cli.Command{Name: n}
	}
	return nearest(typed, cmds)
}

func configValue(c *cli.Context, name string) string {
	return loadSettings(c).values[name]
}

// setting reads a command's own flag that config.json may also set: the
// flag or its variable, else config.json, else the flag's default.
func setting(c *cli.Context, name string) string {
	if !c.IsSet(name) {
		if v := configValue(c, name); v != "" {
			return v
		}
	}
	return c.String(name)
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
	Store   *sqlite.Store
	// Root is the repository's working tree, or the directory acolyte runs
	// in when there is no repository.
	Root string
	// Repo and Workspace are nil outside a git repository.
	Repo      *gitsync.Repo
	Workspace *gitsync.Checkout
	// Visibility is what this checkout and session can see, the same rule
	// the toolkit applies (gitsync.NewCheckout keys a project by its root).
	Visibility memory.Visibility
	// Team is the team database, nil when none is configured; it connects
	// on first use.
	Team *postgres.Remote

	staleOnce sync.Once
	staleMemo *stalememo.Memo
	// metUnkept says a search's stale check had to read history for a
	// cited blob no write kept (a memory stored before writes kept
	// them): the background fill then keeps every memory's.
	metUnkept atomic.Bool
}

// leftBlobsToKeep says whether the command leaves the background fill
// cited blob ids to find: an import brought more memories than a write
// keeps them for itself, or a search met memories no write kept.
func (w *workspace) leftBlobsToKeep() bool {
	return w.Workspace != nil && w.Store.ReadOnly() == "" && (w.Workspace.LeftBlobsToKeep() || w.metUnkept.Load())
}

// noticingFinds is the state the stale check keeps blob ids in, noting
// in met that it found some by reading history.
type noticingFinds struct {
	stalememo.BatchState
	met *atomic.Bool
}

func (s noticingFinds) SetStates(ctx context.Context, values map[string]string) error {
	if len(values) > 0 {
		s.met.Store(true)
	}
	return s.BatchState.SetStates(ctx, values)
}

func (w *workspace) Close() error {
	if w.Team != nil {
		w.Team.Close()
	}
	return w.Store.Close()
}

// stale is what search, the agent, MCP and ui ask which memories cite
// files changed since they were written: gitsync's answer, kept in the
// store while the files stay as they were (and the committed blobs it
// compares them with, for good), nil outside a repository, where no
// memory is stale.
func (w *workspace) stale() memory.StaleFunc {
	if w.Repo == nil {
		return nil
	}
	w.staleOnce.Do(func() {
		w.staleMemo = stalememo.NewKeeping(w.Repo.Root, w.Store, func(kept stalememo.BatchState) memory.StaleFunc {
			return w.Repo.StaleByIDKeeping(noticingFinds{kept, &w.metUnkept})
		})
	})
	return w.staleMemo.Stale
}

// teamSettings returns the team database URL and team name, both empty
// when no team is configured, and refuses one without the other.
func teamSettings(c *cli.Context) (url, team string, err error) {
	url, team = global(c, flagTeamDB), global(c, flagTeam)
	switch {
	case url == "" && team == "":
		return "", "", nil
	case url == "":
		return "", "", usage(fmt.Errorf("%w: --team %s is set but no database; pass --team-db URL or set ACOLYTE_TEAM_DB", memory.ErrNoTeam, team))
	case team == "":
		return "", "", usage(errors.New("--team-db is set but no team; pass --team NAME or set ACOLYTE_TEAM"))
	}
	if err := postgres.CheckTeam(team); err != nil {
		return "", "", usage(err)
	}
	return url, team, nil
}

// withTeam adds the team database to w when one is configured: team
// memories go there, and searches and listings without a scope see both.
func withTeam(c *cli.Context, w *workspace) error {
	url, teamName, err := teamSettings(c)
	if err != nil {
		return err
	}
	if url == "" {
		if c.String("scope") == string(memory.ScopeTeam) {
			// Without this, a listing or search of the team scope would
			// quietly find nothing in the local store.
			return usage(fmt.Errorf("%w: pass --team-db URL and --team NAME, or set ACOLYTE_TEAM_DB and ACOLYTE_TEAM", memory.ErrNoTeam))
		}
		return nil
	}
	// A team database that is down, slow or not yet set up must not take
	// local memory with it: nothing connects until a call needs the team
	// (a hook, a project remember or sync never does), every call is
	// bounded (postgres.Remote), and a search or listing that also reads
	// local memory waits for the team as long as its pace says
	// (team.Pace), at most team.PaceMax.
	budget := teamCommandBudget
	if longLived(c.Command.Name) {
		budget = 0
	}
	ts := postgres.NewRemote(url, w.Store.Embedder(), budget)
	w.Team = ts
	w.Visibility.Team = teamName
	w.Toolkit = team.Toolkit{Local: w.Toolkit, Team: ts, Visibility: w.Visibility, Refuse: gitsync.RefuseSecret,
		Pacer: &teamPacer{ctx: c.Context, store: w.Store, key: teamPaceKey(url), learn: !longLived(c.Command.Name)},
		Warn: func(err error) {
			warn(c, warnTeamLeftOut, "team memories are left out: "+err.Error())
		}}
	return nil
}

// teamPacer keeps a team.Pace for one team database in the local
// store's state, so that every command starts from what the commands
// before it measured. Only short-lived commands learn answer times: each
// connects anew, and its time to answer is what the next one will take,
// while a long-lived process reuses its connection and would teach a wait
// too short for them. Both learn from waits that ran out.
type teamPacer struct {
	ctx   context.Context
	store *sqlite.Store
	key   string
	learn bool

	mu sync.Mutex
}

func teamPaceKey(url string) string {
	sum := sha256.Sum256([]byte(url))
	return "team-pace:" + hex.EncodeToString(sum[:8])
}

func (p *teamPacer) load() team.Pace {
	v, err := p.store.GetState(p.ctx, p.key)
	if err != nil {
		// Without the state, the wait is the longest, as at first.
		return team.Pace{}
	}
	return team.ParsePace(v)
}

// update changes the kept pace; best effort, since a lost update only
// makes a later search wait longer or shorter once.
func (p *teamPacer) update(change func(*team.Pace)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pace := p.load()
	was := pace
	change(&pace)
	if pace != was {
		_ = p.store.SetState(p.ctx, p.key, pace.String())
	}
}

func (p *teamPacer) Wait() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.load().Wait(time.Now())
}

func (p *teamPacer) Answered(took time.Duration) {
	p.update(func(pace *team.Pace) {
		if p.learn {
			pace.Answered(took)
		} else if pace.Backoff > 0 || !pace.SlowUntil.IsZero() {
			// An answer still says the team is back.
			pace.Backoff, pace.SlowUntil = 0, time.Time{}
		}
	})
}

func (p *teamPacer) LeftOut(waited time.Duration) {
	p.update(func(pace *team.Pace) { pace.LeftOut(time.Now(), waited) })
}

// teamCommandBudget bounds all the team calls of one CLI command together:
// a command that makes several (forget looks each id up, then deletes)
// must not take several CallTimeouts.
const teamCommandBudget = 10 * time.Second

// longLived says whether a command serves many calls: such a command has
// no command budget, only each call's bound, and reconnects when the team
// database comes back.
func longLived(command string) bool {
	switch command {
	case "mcp", "chat", "run", "ui":
		return true
	}
	return false
}

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

// databasePath is where the database is, in the data directory.
func databasePath(c *cli.Context) (string, error) {
	dir, err := home(c)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "acolyte.db"), nil
}

// openStore opens the database with the configured embedder.
func openStore(c *cli.Context) (*sqlite.Store, error) {
	db, err := databasePath(c)
	if err != nil {
		return nil, err
	}
	e, err := chooseEmbedder(c)
	if err != nil {
		return nil, err
	}
	if err := gitsync.CheckHome(c.Context, db); err != nil {
		return nil, usage(err)
	}
	s, err := sqlite.Open(c.Context, db, e)
	if err != nil {
		return nil, err // corrupt, locked or unwritable: exitCode says 2
	}
	note(c, metaStores, s)
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
	w, err := bindWorkspace(c, s, dir, isSet(c, flagRepo))
	if err != nil {
		s.Close()
		return nil, err
	}
	return w, nil
}

// bindWorkspace binds the open store s to the repository containing dir,
// or, when dir is in none and need is false, to user and session memory.
// Closing the workspace closes s. The MCP server binds one store to each
// repository its clients' roots name.
func bindWorkspace(c *cli.Context, s *sqlite.Store, dir string, need bool) (*workspace, error) {
	w := &workspace{Store: s, Root: dir}
	repo, err := gitsync.Discover(dir)
	switch {
	case err == nil:
		w.Repo, w.Root = repo, repo.Root
		w.Workspace = gitsync.NewCheckout(repo, s, global(c, flagSession))
		w.Workspace.Warn = func(msg string) { warn(c, warnOther, msg) }
		note(c, metaWorkspaces, w)
		// A project write goes to .acolyte/ before the store: a damaged
		// database refuses it first, as it refuses every other write.
		w.Toolkit = memory.Checked{Toolkit: w.Workspace, Check: s.CheckWritable}
		w.Visibility = memory.Visibility{ProjectKey: repo.Root, SessionKey: global(c, flagSession)}
		warnBrokenHooks(c, repo)
	case errors.Is(err, gitsync.ErrNotRepo) && !need:
		w.Visibility = memory.Visibility{SessionKey: global(c, flagSession)}
		w.Toolkit = memory.Scoped{Store: s, Visibility: w.Visibility, Guard: gitsync.RefuseSecret}
	default:
		return nil, repoError(dir, err)
	}
	if err := withTeam(c, w); err != nil {
		if w.Team != nil {
			w.Team.Close()
		}
		return nil, err
	}
	return w, nil
}

// warnBrokenHooks tells the user, on stderr, when acolyte was set up in the
// repository and one of its hooks no longer runs: a hook manager's
// reinstall replaces hooks without a word, and memory would silently stop
// following commits and checkouts. The hooks' own commands and init say it
// themselves.
func warnBrokenHooks(c *cli.Context, repo *gitsync.Repo) {
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && slices.Contains([]string{"hook", "hooks", "init"}, ctx.Command.Name) {
			return
		}
	}
	msg, err := hooks.Warning(c.Context, repo)
	if err != nil {
		return // the command's own work reports what is wrong with the repository
	}
	if msg != "" {
		warn(c, warnOther, msg)
	}
}

// repoError explains why --repo DIR (or the current directory) cannot be
// used. A --repo that names no repository is an error, never a quiet
// fallback to user scope: a typo would otherwise store project facts where
// the project never sees them.
func repoError(dir string, err error) error {
	if _, statErr := os.Stat(dir); statErr != nil {
		return usage(fmt.Errorf("--repo %s: %w", dir, statErr))
	}
	if errors.Is(err, gitsync.ErrNotRepo) {
		return usage(fmt.Errorf("--repo %s: %w; run git init there, or leave out --repo to use user memories", dir, err))
	}
	return usage(fmt.Errorf("--repo %s: %w", dir, err))
}

// isSet says whether a flag was given before or after the command name.
func isSet(c *cli.Context, name string) bool {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet(name) {
			return true
		}
	}
	return false
}
