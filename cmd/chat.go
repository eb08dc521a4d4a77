package cmd

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

func chatCommand() *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "talk with the agent; each line is a message (/exit or Ctrl-D to end)",
		Description: "The agent keeps the conversation and the tools it loaded between messages. When the chat\n" +
			"ends it stores what it learnt as observations (unless --no-distill).",
		Flags: append(agentFlags(),
			&cli.BoolFlag{Name: "yes", Usage: "allow run_shell without asking"},
			&cli.BoolFlag{Name: "json", Usage: "print the conversation's events as JSON lines, as run --json does"},
		),
		Action: func(c *cli.Context) error {
			in := bufio.NewScanner(c.App.Reader)
			in.Buffer(make([]byte, 64<<10), 1<<20)
			yes := c.Bool("yes")
			confirm := func(cmd string) bool {
				if yes {
					return true
				}
				fmt.Fprintf(c.App.ErrWriter, "run `%s`? [y/N] ", cmd)
				if !in.Scan() {
					return false
				}
				a := strings.ToLower(strings.TrimSpace(in.Text()))
				return a == "y" || a == "yes"
			}
			s, closer, err := agentSession(c, confirm, eventPrinter(c.App.Writer, c.App.ErrWriter, c.Bool("json")), !c.Bool("json"))
			if err != nil {
				return err
			}
			defer closer.Close()
			talked := false
			for {
				fmt.Fprint(c.App.ErrWriter, "> ")
				if !in.Scan() {
					fmt.Fprintln(c.App.ErrWriter)
					break
				}
				line := strings.TrimSpace(in.Text())
				if line == "/exit" || line == "/quit" {
					break
				}
				if line == "" {
					continue
				}
				talked = true
				if _, err := s.Turn(c.Context, line); err != nil {
					return turnError(err)
				}
			}
			if err := in.Err(); err != nil {
				return usage(fmt.Errorf("read input: %w", err))
			}
			if talked && !c.Bool("no-distill") {
				if _, err := s.Distill(c.Context); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
