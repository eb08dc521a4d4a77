package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/urfave/cli/v2"
)

func chatCommand() *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "talk with the agent; each line is a message (/exit, Ctrl-D or Ctrl-C at the prompt to end)",
		Description: "The agent keeps the conversation and the tools it loaded between messages. Ctrl-C during a\n" +
			"reply stops that reply; Ctrl-C again, or at the prompt, ends the chat. However the chat ends,\n" +
			"it stores what it learnt as observations (unless --no-distill).",
		Flags: append(agentFlags(),
			&cli.BoolFlag{Name: "yes", Usage: "allow run_shell without asking"},
			&cli.BoolFlag{Name: "json", Usage: "print the conversation's events as JSON lines, as run --json does"},
		),
		Action: func(c *cli.Context) error {
			// The chat decides what Ctrl-C means, so it listens itself and
			// works on a context the process-wide interrupt does not end.
			interrupts := make(chan os.Signal, 1)
			signal.Notify(interrupts, os.Interrupt)
			defer signal.Stop(interrupts)
			ctx := context.WithoutCancel(c.Context)

			lines, readErr := readLines(c)
			printer := &textPrinter{stdout: c.App.Writer, stderr: c.App.ErrWriter}
			yes := c.Bool("yes")
			confirm := func(cmd string) bool {
				if yes {
					return true
				}
				printer.endLine()
				fmt.Fprintf(c.App.ErrWriter, "run `%s`? [y/N] ", cmd)
				select {
				case line, ok := <-lines:
					if !ok {
						fmt.Fprintln(c.App.ErrWriter)
						return false
					}
					a := strings.ToLower(strings.TrimSpace(line))
					return a == "y" || a == "yes"
				case <-interrupts:
					fmt.Fprintln(c.App.ErrWriter)
					return false
				}
			}
			show := printer.print
			if c.Bool("json") {
				show = eventPrinter(c.App.Writer, c.App.ErrWriter, true)
			}
			s, closer, err := agentSession(c, confirm, show, !c.Bool("json"))
			if err != nil {
				return err
			}
			defer closer.Close()
			talked, stopped := false, false
		chat:
			for {
				fmt.Fprint(c.App.ErrWriter, "> ")
				var line string
				select {
				case <-interrupts:
					fmt.Fprintln(c.App.ErrWriter)
					break chat
				case l, ok := <-lines:
					if !ok {
						fmt.Fprintln(c.App.ErrWriter)
						break chat
					}
					line = strings.TrimSpace(l)
				}
				if line == "/exit" || line == "/quit" {
					break
				}
				if line == "" {
					continue
				}
				talked = true
				turnCtx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				leave := make(chan bool, 1)
				go func() {
					select {
					case <-interrupts:
						cancel()
						fmt.Fprintln(c.App.ErrWriter, "\nacolyte: stopping this reply (Ctrl-C again to leave the chat)")
					case <-done:
						leave <- false
						return
					}
					select {
					case <-interrupts:
						leave <- true
					case <-done:
						leave <- false
					}
				}()
				_, err := s.Turn(turnCtx, line)
				close(done)
				cancel()
				if err != nil {
					// A failed or stopped turn ends the turn, not the
					// conversation: say so and take the next message.
					if errors.Is(err, context.Canceled) {
						fmt.Fprintln(c.App.ErrWriter, "acolyte: stopped; memories and files already written are kept")
					} else {
						fmt.Fprintf(c.App.ErrWriter, "acolyte: %v\n", err)
					}
				}
				if <-leave {
					stopped = true
					break
				}
			}
			if talked {
				distill(ctx, c, s)
			}
			if stopped {
				return fail(errors.New("interrupted; memories and files already written are kept"))
			}
			if err := readErr(); err != nil {
				return usage(fmt.Errorf("read input: %w", err))
			}
			return nil
		},
	}
}

// readLines reads the chat's input on a goroutine, so the prompt can wait
// for a line and for Ctrl-C at once. The channel closes at the end of the
// input; the returned function then reports a read error, if any.
func readLines(c *cli.Context) (<-chan string, func() error) {
	in := bufio.NewScanner(c.App.Reader)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	lines := make(chan string)
	errc := make(chan error, 1)
	go func() {
		for in.Scan() {
			lines <- in.Text()
		}
		errc <- in.Err()
		close(lines)
	}()
	return lines, func() error {
		select {
		case err := <-errc:
			return err
		default:
			return nil
		}
	}
}
