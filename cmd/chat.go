package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/agent/transcript"
	"github.com/acolyte-dev/acolyte/internal/termtext"
)

func chatCommand() *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "talk with the agent; each line is a message (/exit, Ctrl-D or Ctrl-C at the prompt to end)",
		Description: "The agent keeps the conversation and the tools it loaded between messages. Ctrl-C during a\n" +
			"reply stops that reply; Ctrl-C again, or at the prompt, ends the chat. However the chat ends,\n" +
			"it stores what it learnt as observations (unless --no-distill). Lines typed while the agent\n" +
			"works are the next messages; a run_shell confirmation takes only a line typed after it is\n" +
			"shown, and Ctrl-C there refuses the command and stops the reply.",
		Flags: append(agentFlags(),
			&cli.BoolFlag{Name: "yes", Usage: "allow run_shell without asking"},
			&cli.BoolFlag{Name: "json", Usage: "print the conversation's events as JSON lines, as run --json does"},
			&cli.BoolFlag{Name: "resume", Usage: "continue a saved conversation, of the session `ID` given as the argument or else the last one: its history, compacted to the budget, and its session memories"},
		),
		ArgsUsage: "[ID, with --resume]",
		Action: func(c *cli.Context) error {
			resume := resumeArg{id: c.Args().First(), last: c.Bool("resume")}
			if c.Args().Len() > 1 || c.Args().Len() == 1 && !c.Bool("resume") {
				return usage(fmt.Errorf("chat takes no arguments but a session id after --resume, e.g. acolyte chat --resume %s", c.Args().First()))
			}
			// The chat decides what Ctrl-C means, so it listens itself and
			// works on a context the process-wide interrupt does not end.
			interrupts := make(chan os.Signal, 1)
			signal.Notify(interrupts, os.Interrupt)
			defer signal.Stop(interrupts)
			// SIGTERM and SIGHUP (a CI timeout, a closed terminal) end the
			// chat at once, the running reply with it.
			terminate := make(chan os.Signal, 1)
			signal.Notify(terminate, syscall.SIGTERM, syscall.SIGHUP)
			defer signal.Stop(terminate)
			ch := &chat{in: newChatInput(c.App.Reader), errw: c.App.ErrWriter, interrupts: interrupts, terminate: terminate, yes: c.Bool("yes")}
			ch.printer = transcript.NewText(c.App.Writer, c.App.ErrWriter)
			show := ch.printer.Print
			if c.Bool("json") {
				show = transcript.Printer(c.App.Writer, c.App.ErrWriter, true)
			}
			s, closer, save, err := agentSession(c, ch.confirm, show, !c.Bool("json"), resume)
			if err != nil {
				return err
			}
			defer closer.Close()
			ctx := context.WithoutCancel(c.Context)
			talked, stopped := false, false
			for {
				line, ok := ch.next()
				if !ok || line == "/exit" || line == "/quit" {
					break
				}
				if line == "" {
					continue
				}
				talked = true
				stopped = ch.turn(ctx, func(ctx context.Context) error { _, err := s.Turn(ctx, line); return err })
				save()
				if stopped {
					break
				}
			}
			if talked {
				distill(ctx, c, s)
			}
			if stopped {
				return fail(errors.New("interrupted; memories and files already written are kept"))
			}
			if err := ch.in.Err(); err != nil {
				return usage(fmt.Errorf("read input: %w", err))
			}
			return nil
		},
	}
}

// chat is one conversation's terminal side: the queued input, Ctrl-C, and
// the turn a confirmation belongs to.
type chat struct {
	in         *chatInput
	errw       io.Writer
	interrupts chan os.Signal
	terminate  chan os.Signal
	printer    *transcript.Text
	yes        bool

	mu       sync.Mutex
	turnDone <-chan struct{} // closed when the running turn is stopped
}

// next prints the prompt and waits for a message; ok is false at the end
// of the input or on Ctrl-C.
func (ch *chat) next() (string, bool) {
	fmt.Fprint(ch.errw, "> ")
	for queued := true; ; queued = false {
		if line, ok, ended := ch.in.take(0); ok {
			if queued && ch.in.tty != nil {
				// Typed while the model worked, and echoed then, amid its
				// output: show which message this prompt sends.
				fmt.Fprintln(ch.errw, termtext.Escape(line))
			}
			return strings.TrimSpace(line), true
		} else if ended {
			fmt.Fprintln(ch.errw)
			return "", false
		}
		select {
		case <-ch.interrupts:
			fmt.Fprintln(ch.errw)
			return "", false
		case <-ch.terminate:
			fmt.Fprintln(ch.errw)
			return "", false
		case <-ch.in.notify:
		}
	}
}

// turn runs one turn, stopped by Ctrl-C; it reports whether a second
// Ctrl-C asked to leave the chat.
func (ch *chat) turn(ctx context.Context, run func(context.Context) error) (leaveChat bool) {
	turnCtx, cancel := context.WithCancel(ctx)
	ch.mu.Lock()
	ch.turnDone = turnCtx.Done()
	ch.mu.Unlock()
	done := make(chan struct{})
	leave := make(chan bool, 1)
	go func() {
		select {
		case <-ch.interrupts:
			cancel()
			fmt.Fprintln(ch.errw, "\nacolyte: stopping this reply (Ctrl-C again to leave the chat)")
		case <-ch.terminate:
			cancel()
			leave <- true
			return
		case <-done:
			leave <- false
			return
		}
		select {
		case <-ch.interrupts:
			leave <- true
		case <-ch.terminate:
			leave <- true
		case <-done:
			leave <- false
		}
	}()
	err := run(turnCtx)
	close(done)
	cancel()
	if err != nil {
		// A failed or stopped turn ends the turn, not the conversation:
		// say so and take the next message.
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(ch.errw, "acolyte: stopped; memories and files already written are kept")
		} else {
			fmt.Fprintf(ch.errw, "acolyte: %s\n", termtext.EscapeText(err.Error()))
		}
	}
	return <-leave
}

// confirm asks before run_shell runs cmd. It shows the whole command,
// escaped, and takes only an answer typed after that (chatInput.answerFrom);
// Ctrl-C, which stops the turn, is a no.
func (ch *chat) confirm(cmd string) bool {
	if ch.yes {
		return true
	}
	ch.mu.Lock()
	stopped := ch.turnDone
	ch.mu.Unlock()
	ch.printer.EndLine()
	fmt.Fprintf(ch.errw, "run `%s`? [y/N] ", termtext.Escape(cmd))
	from := ch.in.answerFrom()
	for {
		line, ok, ended := ch.in.take(from)
		if ok {
			a := strings.ToLower(strings.TrimSpace(line))
			return a == "y" || a == "yes"
		}
		if ended {
			fmt.Fprintln(ch.errw)
			return false
		}
		select {
		case <-stopped:
			fmt.Fprintln(ch.errw)
			return false
		case <-ch.in.notify:
		}
	}
}
