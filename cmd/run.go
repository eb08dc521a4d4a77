package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/gemini"
	"github.com/acolyte-dev/acolyte/agent/openai"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
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
	)
}

// openModel builds the model the flags name.
func openModel(c *cli.Context) (agent.Model, error) {
	switch p := c.String("provider"); p {
	case "gemini":
		m, err := gemini.New(c.Context, gemini.Config{APIKey: geminiKey(), Model: c.String("model"), BaseURL: c.String("base-url")})
		if err != nil {
			return nil, usage(err)
		}
		return m, nil
	case "openai":
		m, err := openai.New(openai.Config{BaseURL: c.String("base-url"), APIKey: os.Getenv("OPENAI_API_KEY"), Model: c.String("model")})
		if err != nil {
			return nil, usage(err)
		}
		return m, nil
	default:
		return nil, usage(fmt.Errorf("unknown provider %q: use %s", p, strings.Join(providers, " or ")))
	}
}

// agentSession opens everything a task needs: the workspace, the model and
// a session over them. confirm decides run_shell calls.
func agentSession(c *cli.Context, confirm func(string) bool, onEvent func(agent.Event), stream bool) (*agent.Session, io.Closer, error) {
	if n := c.Int("max-steps"); n < 1 {
		return nil, nil, usage(fmt.Errorf("--max-steps must be at least 1, got %d", n))
	}
	m, err := openModel(c)
	if err != nil {
		return nil, nil, err
	}
	if global(c, flagSession) == "" {
		// Each task is its own session unless the caller joins one, so
		// session facts from distill have somewhere to live.
		if err := c.Set(flagSession, "session-"+memory.NewID(time.Now())); err != nil {
			return nil, nil, err
		}
	}
	w, err := openWorkspace(c)
	if err != nil {
		return nil, nil, err
	}
	ws, err := toolbox.NewWorkspace(w.Root)
	if err != nil {
		w.Close()
		return nil, nil, usage(err)
	}
	ws.Confirm = confirm
	s, err := agent.NewSession(agent.Config{Model: m, Toolkit: w.Toolkit, Workspace: ws, MaxSteps: c.Int("max-steps"), Stream: stream, OnEvent: onEvent})
	if err != nil {
		w.Close()
		return nil, nil, usage(err)
	}
	return s, w, nil
}

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
		),
		Action: func(c *cli.Context) error {
			task := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if task == "" {
				return usage(errors.New(`run needs a task, e.g. acolyte run "add a test for the parser"`))
			}
			yes := c.Bool("yes")
			confirm := func(string) bool { return yes }
			out := eventPrinter(c.App.Writer, c.App.ErrWriter, c.Bool("json"))
			s, closer, err := agentSession(c, confirm, out, !c.Bool("json"))
			if err != nil {
				return err
			}
			defer closer.Close()
			res, err := s.Turn(c.Context, task)
			if err != nil {
				return turnError(err)
			}
			if !c.Bool("no-distill") {
				if _, err := s.Distill(c.Context); err != nil {
					return err
				}
			}
			if res.Incomplete {
				return fail(fmt.Errorf("the task did not finish in %d steps", c.Int("max-steps")))
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

// eventPrinter shows a turn as it happens: JSON lines on stdout, or the
// model's text on stdout and tool activity on stderr.
func eventPrinter(stdout, stderr io.Writer, asJSON bool) func(agent.Event) {
	if asJSON {
		enc := json.NewEncoder(stdout)
		return func(e agent.Event) { _ = enc.Encode(e) }
	}
	return func(e agent.Event) {
		switch e.Type {
		case agent.EventText:
			fmt.Fprint(stdout, e.Text)
		case agent.EventToolCall:
			fmt.Fprintf(stderr, "→ %s %s\n", e.Tool, oneLine(string(e.Args), 120))
		case agent.EventToolResult:
			if e.IsError {
				fmt.Fprintf(stderr, "  ✗ %s\n", oneLine(string(e.Result), 160))
			}
		case agent.EventFinal:
			fmt.Fprintln(stdout)
		case agent.EventDistill:
			if n := len(e.Distill.Added); n > 0 {
				fmt.Fprintf(stderr, "remembered %d observation(s):\n", n)
				for _, m := range e.Distill.Added {
					fmt.Fprintf(stderr, "  %s [%s] %s\n", m.ID, m.Scope, oneLine(m.Content, 100))
				}
			}
		}
	}
}
