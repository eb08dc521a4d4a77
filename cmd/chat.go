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
		Flags: append(agentFlags(), &cli.BoolFlag{Name: "yes", Usage: "allow run_shell without asking"}),
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
			s, closer, err := agentSession(c, confirm, eventPrinter(c.App.Writer, c.App.ErrWriter, false), true)
			if err != nil {
				return err
			}
			defer closer.Close()
			talked := false
			var stopped error
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
					if c.Context.Err() != nil {
						stopped = err
						break
					}
					// A failed turn (a model error, a step limit) ends the
					// turn, not the conversation: say so and take the next
					// message.
					fmt.Fprintf(c.App.ErrWriter, "acolyte: %v\n", err)
				}
			}
			readErr := in.Err()
			if talked {
				distill(c, s)
			}
			if stopped != nil {
				return turnError(stopped)
			}
			if readErr != nil {
				return usage(fmt.Errorf("read input: %w", readErr))
			}
			return nil
		},
	}
}
