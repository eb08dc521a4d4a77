package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/gemini"
	"github.com/acolyte-dev/acolyte/agent/openai"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/agent/transcript"
	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/gitsync/hooks"
	"github.com/acolyte-dev/acolyte/internal/termtext"
)

// Providers a model can come from; the first is the default.
var providers = []string{"gemini", "openai"}

// modelFlags choose the model; run, chat and prompt share them.
func modelFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "provider", EnvVars: []string{"ACOLYTE_PROVIDER"}, Value: providers[0], Usage: "model provider: " + strings.Join(providers, " or ") + " (any OpenAI-compatible server, e.g. Ollama)"},
		&cli.StringFlag{Name: "model", EnvVars: []string{"ACOLYTE_MODEL"}, Usage: "model id (default for gemini: " + gemini.DefaultModel + ")"},
		&cli.StringFlag{Name: "base-url", EnvVars: []string{"ACOLYTE_BASE_URL"}, Usage: "API endpoint (default for openai: " + openai.DefaultBaseURL + ")"},
	}
}

// agentFlags are the flags of the commands that run the agent.
func agentFlags() []cli.Flag {
	return append(modelFlags(),
		&cli.IntFlag{Name: "max-steps", Value: agent.DefaultMaxSteps, Usage: "most model calls per task before stopping"},
		&cli.BoolFlag{Name: "no-distill", Usage: "do not store observations from the finished task"},
		&cli.IntFlag{Name: "context-budget", EnvVars: []string{"ACOLYTE_CONTEXT_BUDGET"}, Usage: "most tokens one model request may carry (3 bytes a token, or the provider's count); older tool results are compacted to stay under it", DefaultText: fmt.Sprintf("%d, or context-budget in config.json", agent.DefaultContextBudget)},
		&cli.DurationFlag{Name: "timeout", EnvVars: []string{"ACOLYTE_TIMEOUT"}, Usage: "longest one model request may take, retries included, distill's too", DefaultText: fmt.Sprintf("%s, or timeout in config.json", defaultRequestTimeout)},
		&cli.DurationFlag{Name: "session-max-age", EnvVars: []string{"ACOLYTE_SESSION_MAX_AGE"}, Usage: "forget the memories and conversations of agent sessions unused for this long", DefaultText: fmt.Sprintf("%s, or session-max-age in config.json", agent.DefaultSessionMaxAge)},
	)
}

// agentSettingNames are the agent flags config.json may also set.
func agentSettingNames() []string {
	return []string{"provider", "model", "base-url", "context-budget", "timeout", "session-max-age"}
}

// defaultRequestTimeout bounds one model request: a slow local model can
// take minutes on a long answer, a stuck connection should not take hours.
const defaultRequestTimeout = 10 * time.Minute

// agentInt and agentDuration read an agent setting from its flag (or
// variable), else from config.json, else def.
func agentInt(c *cli.Context, name string, def int) (int, error) {
	if c.IsSet(name) {
		if n := c.Int(name); n > 0 {
			return n, nil
		}
		return 0, usage(fmt.Errorf("--%s must be a positive number, got %d", name, c.Int(name)))
	}
	if v := configValue(c, name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return 0, usage(fmt.Errorf("%s in config.json must be a positive whole number, got %q", name, v))
		}
		return n, nil
	}
	return def, nil
}

func agentDuration(c *cli.Context, name string, def time.Duration) (time.Duration, error) {
	if c.IsSet(name) {
		if d := c.Duration(name); d > 0 {
			return d, nil
		}
		return 0, usage(fmt.Errorf("--%s must be a positive duration such as 90s or 5m, got %s", name, c.Duration(name)))
	}
	if v := configValue(c, name); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, usage(fmt.Errorf("%s in config.json must be a positive duration such as 90s or 168h, got %q", name, v))
		}
		return d, nil
	}
	return def, nil
}

// openModel builds the model the flags name.
func openModel(c *cli.Context) (agent.Model, error) { return openModelWaiting(c, nil) }

// openModelWaiting is openModel with onWait told about each retry's wait.
func openModelWaiting(c *cli.Context, onWait func(agent.Wait)) (agent.Model, error) {
	switch p := setting(c, "provider"); p {
	case "gemini":
		m, err := gemini.New(c.Context, gemini.Config{APIKey: geminiKey(), Model: setting(c, "model"), BaseURL: setting(c, "base-url"), OnWait: onWait})
		if err != nil {
			return nil, usage(err)
		}
		return m, nil
	case "openai":
		m, err := openai.New(openai.Config{BaseURL: setting(c, "base-url"), APIKey: os.Getenv("OPENAI_API_KEY"), Model: setting(c, "model"), OnWait: onWait})
		if err != nil {
			return nil, usage(err)
		}
		return m, nil
	default:
		return nil, usage(fmt.Errorf("unknown provider %q: use %s", p, strings.Join(providers, " or ")))
	}
}

// resumeArg names the saved conversation a command continues, if any: the
// session id, or the last one saved.
type resumeArg struct {
	id   string
	last bool
}

// conversationsDir is where conversations are saved for --resume.
func conversationsDir(c *cli.Context) (string, error) {
	h, err := home(c)
	if err != nil {
		return "", err
	}
	return filepath.Join(h, "conversations"), nil
}

// resumeConversation loads the conversation resume names and makes its
// session the command's, so its session memories come back too.
func resumeConversation(c *cli.Context, dir string, resume resumeArg) (*agent.Conversation, error) {
	if resume.id == "" && !resume.last {
		return nil, nil
	}
	id := resume.id
	if id == "" {
		last, err := agent.LastConversation(dir)
		if err != nil {
			return nil, usage(err)
		}
		id = last
	}
	if s := global(c, flagSession); s != "" && s != id {
		return nil, usage(fmt.Errorf("--resume %s and --session %s name different sessions; give one of them", id, s))
	}
	conv, err := agent.LoadConversation(dir, id)
	if err != nil {
		return nil, usage(err)
	}
	if err := c.Set(flagSession, id); err != nil {
		return nil, err
	}
	return &conv, nil
}

// agentSession opens everything a task needs: the workspace, the model and
// a session over them, resumed from a saved conversation if resume names
// one. confirm decides run_shell calls. The session id is announced through
// onEvent, and sessions unused for longer than --session-max-age are
// pruned. save writes the conversation so far, for --resume.
func agentSession(c *cli.Context, confirm func(string) bool, onEvent func(agent.Event), stream bool, resume resumeArg) (*agent.Session, io.Closer, func(), error) {
	if n := c.Int("max-steps"); n < 1 {
		return nil, nil, nil, usage(fmt.Errorf("--max-steps must be at least 1, got %d", n))
	}
	budget, err := agentInt(c, "context-budget", agent.DefaultContextBudget)
	if err != nil {
		return nil, nil, nil, err
	}
	timeout, err := agentDuration(c, "timeout", defaultRequestTimeout)
	if err != nil {
		return nil, nil, nil, err
	}
	maxAge, err := agentDuration(c, "session-max-age", agent.DefaultSessionMaxAge)
	if err != nil {
		return nil, nil, nil, err
	}
	m, err := openModelWaiting(c, func(w agent.Wait) { onEvent(w.Event()) })
	if err != nil {
		return nil, nil, nil, err
	}
	dir, err := conversationsDir(c)
	if err != nil {
		return nil, nil, nil, err
	}
	conv, err := resumeConversation(c, dir, resume)
	if err != nil {
		return nil, nil, nil, err
	}
	session := global(c, flagSession)
	if session == "" {
		// Each task is its own session unless the caller resumes one with
		// --resume or --session, so session facts from distill have
		// somewhere to live.
		session = agent.NewSessionID(time.Now())
		if err := c.Set(flagSession, session); err != nil {
			return nil, nil, nil, err
		}
	}
	w, err := openWorkspace(c)
	if err != nil {
		return nil, nil, nil, err
	}
	sessions := agent.Sessions{Store: w.Store}
	now := time.Now()
	if err := sessions.Touch(c.Context, session, now); err != nil {
		w.Close()
		return nil, nil, nil, fail(err)
	}
	if pruned, err := sessions.Prune(c.Context, maxAge, session, now); err != nil {
		fmt.Fprintf(c.App.ErrWriter, "acolyte: warning: %s\n", termtext.EscapeText(err.Error()))
	} else if len(pruned) > 0 {
		for _, id := range pruned {
			_ = agent.RemoveConversation(dir, id) // one left behind is only a file
		}
		onEvent(agent.Event{Type: agent.EventWarning, Text: fmt.Sprintf("forgot the memories of %d session(s) unused for %s", len(pruned), maxAge)})
	}
	ws, err := toolbox.NewSandbox(w.Root)
	if err != nil {
		w.Close()
		return nil, nil, nil, usage(err)
	}
	ws.Confirm = confirm
	ws.Trust = trustedBy
	s, err := agent.NewSession(agent.Config{Model: m, Toolkit: w.Toolkit, Sandbox: ws, Stale: w.stale(), MaxSteps: c.Int("max-steps"),
		ContextBudget: budget, RequestTimeout: timeout, Stream: stream, OnEvent: onEvent})
	if err != nil {
		w.Close()
		return nil, nil, nil, usage(err)
	}
	started := agent.Event{Type: agent.EventSession, Session: session}
	if conv != nil {
		s.Resume(conv.History)
		started.Text = fmt.Sprintf("resumed %d messages saved %s", len(conv.History), conv.Saved.Local().Format(time.DateTime))
	}
	onEvent(started)
	save := func() {
		if err := agent.SaveConversation(dir, session, s.History(), time.Now()); err != nil {
			onEvent(agent.Event{Type: agent.EventWarning, Error: "the conversation was not saved for --resume: " + err.Error()})
		}
	}
	return s, w, save, nil
}

// distill runs the distill step unless --no-distill. It never changes how
// the task ended: a failure is a warning, already reported as an event. It
// is bounded by --timeout, like any model request, and after an interrupt
// by distillAfterInterrupt too, on a context of its own; a stop signal
// while it runs ends it at once.
func distill(ctx context.Context, c *cli.Context, s *agent.Session) {
	if c.Bool("no-distill") {
		return
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, StopSignals...)
	defer signal.Stop(stop)
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	if ctx.Err() != nil {
		var cancelAfter context.CancelFunc
		dctx, cancelAfter = context.WithTimeout(dctx, distillAfterInterrupt)
		defer cancelAfter()
	} else {
		// A stop that comes in from now on is for distill, not the task.
		go func() {
			select {
			case <-ctx.Done():
				cancel()
			case <-dctx.Done():
			}
		}()
	}
	go func() {
		select {
		case <-stop:
			cancel()
		case <-dctx.Done():
		}
	}()
	_, _ = s.Distill(dctx)
}

// distillAfterInterrupt bounds the distill that runs after Ctrl-C: what the
// session learnt is worth a few seconds, not a hang.
const distillAfterInterrupt = 20 * time.Second

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "give the agent one task and let it work until done",
		ArgsUsage: "TASK...",
		Description: "The agent searches memory and the code, uses tools, and answers. Afterwards it stores\n" +
			"what it learnt as observations (unless --no-distill). run_shell is refused unless --yes.",
		Flags: append(agentFlags(),
			&cli.BoolFlag{Name: "json", Usage: "stream events as JSON lines"},
			&cli.BoolFlag{Name: "yes", Usage: "allow run_shell without asking"},
			&cli.StringFlag{Name: "resume", Usage: "continue the saved conversation of session `ID`: its history, compacted to the budget, and its session memories"},
		),
		Action: func(c *cli.Context) error {
			task := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if task == "" {
				return usage(errors.New(`run needs a task, e.g. acolyte run "add a test for the parser"`))
			}
			yes := c.Bool("yes")
			confirm := func(string) bool { return yes }
			out := transcript.Printer(c.App.Writer, c.App.ErrWriter, c.Bool("json"))
			s, closer, save, err := agentSession(c, confirm, out, !c.Bool("json"), resumeArg{id: c.String("resume")})
			if err != nil {
				return err
			}
			defer closer.Close()
			_, err = s.Turn(c.Context, task)
			save()
			// Whatever the turn learnt is worth keeping however it ended.
			distill(c.Context, c, s)
			if err != nil {
				return turnError(err)
			}
			return nil
		},
	}
}

// turnError explains how a turn failed; an interrupted one keeps whatever
// its tools already wrote. Either way the task got no answer: exit 2.
func turnError(err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted (%w); memories and files already written are kept", err)
	}
	return err
}

// trustedBy is toolbox.Sandbox.Trust: what git runs or obeys in the
// working tree at dir, as gitsync learns it from git.
func trustedBy(ctx context.Context, dir string) ([]toolbox.Trusted, error) {
	repo, err := gitsync.Discover(dir)
	if errors.Is(err, gitsync.ErrNotRepo) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	trusted, err := hooks.TrustedPaths(ctx, repo)
	if err != nil {
		return nil, err
	}
	out := make([]toolbox.Trusted, len(trusted))
	for i, t := range trusted {
		out[i] = toolbox.Trusted{Path: t.Path, Dir: t.Dir, Why: t.Why}
	}
	return out, nil
}
