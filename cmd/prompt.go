package cmd

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/gemini"
	"github.com/acolyte-dev/acolyte/agent/openai"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/internal/termtext"
)

func promptCommand() *cli.Command {
	return &cli.Command{
		Name:  "prompt",
		Usage: "show the exact system prompt and initial tool declarations",
		Description: "--stats counts their tokens against an inject-everything baseline (AGENTS.md files plus\n" +
			"every project memory). Counts come from the Gemini API when a key is set, else from\n" +
			"the documented estimate of one token per four bytes.",
		Flags: append(modelFlags(),
			&cli.BoolFlag{Name: "stats", Usage: "print token counts instead of the text"},
			jsonFlag,
		),
		Action: func(c *cli.Context) error {
			w, err := openWorkspace(c)
			if err != nil {
				return err
			}
			defer w.Close()
			ws, err := toolbox.NewSandbox(w.Root)
			if err != nil {
				return usage(err)
			}
			var counter agent.TokenCounter
			if c.Bool("stats") && setting(c, "provider") == "gemini" && geminiKey() != "" {
				if m, err := openModel(c); err == nil {
					counter = m.(agent.TokenCounter)
				}
			}
			rep, err := agent.Prompt(c.Context, w.Toolkit, ws, counter)
			if err != nil && counter != nil {
				// Offline or rate limited: the estimate still answers the question.
				fmt.Fprintf(c.App.ErrWriter, "acolyte: counting with the API failed (%v); estimating instead\n", err)
				rep, err = agent.Prompt(c.Context, w.Toolkit, ws, nil)
			}
			if err != nil {
				return err
			}
			wire := firstRequestOnTheWire(c, rep)
			if c.Bool("json") {
				if c.Bool("stats") {
					return printJSON(c, struct {
						Counter          string             `json:"counter"`
						Tokens           agent.PromptTokens `json:"tokens"`
						Wire             wireSize           `json:"wire"`
						BaselineFiles    []string           `json:"baseline_files"`
						BaselineMemories int                `json:"baseline_memories"`
					}{rep.Counter, rep.Tokens, wire, rep.BaselineFiles, rep.BaselineMemories})
				}
				return printJSON(c, rep)
			}
			if !c.Bool("stats") {
				fmt.Fprintln(c.App.Writer, termtext.EscapeText(rep.System))
				fmt.Fprintln(c.App.Writer)
				return printJSON(c, rep.Tools)
			}
			t := rep.Tokens
			rows := []struct {
				name string
				n    int
			}{
				{"soul", t.Soul},
				{"instructions", t.Instructions},
				{"tools, deferred", t.ToolsDeferred},
				{"tools, all declared", t.ToolsFull},
				{"first request (system + deferred tools)", t.Initial},
				{"with every tool declared", t.Full},
				{fmt.Sprintf("first request on the wire to %s, envelope included (%d bytes / 4)", wire.Provider, wire.Bytes), wire.Tokens},
				{fmt.Sprintf("inject-everything baseline (%d files, %d memories)", len(rep.BaselineFiles), rep.BaselineMemories), t.Baseline},
				{"baseline + first request", t.Baseline + t.Initial},
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "PART\tTOKENS\n")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%d\n", r.name, r.n)
			}
			fmt.Fprintf(tw, "(counted with %s)\t\n", rep.Counter)
			return tw.Flush()
		},
	}
}

// wireSize is the first request as a provider receives it, before the task.
type wireSize struct {
	Provider string `json:"provider"`
	Bytes    int    `json:"bytes"`
	// Tokens is Bytes/4, the rule the first request's goal is set in.
	Tokens int `json:"tokens"`
}

// firstRequestOnTheWire sizes the first request of a task, with an empty
// task, in the wire format of the provider the flags name, as chat streams it.
func firstRequestOnTheWire(c *cli.Context, rep agent.PromptReport) wireSize {
	req := agent.Request{System: rep.System, Tools: rep.Tools, Messages: []agent.Message{{Role: agent.RoleUser, Parts: []agent.Part{{}}}}}
	w := wireSize{Provider: c.String("provider")}
	switch w.Provider {
	case "openai":
		w.Bytes = openai.RequestBytes(c.String("model"), req, true)
	default:
		w.Bytes = gemini.RequestBytes(req)
	}
	w.Tokens = w.Bytes / 4
	return w
}
