package cmd_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestChatInATerminal drives `acolyte chat` the way a person does: in a real
// terminal (a tmux pane), typing with send-keys and reading the screen with
// capture-pane. Piped input cannot show what only a terminal does: Ctrl-C
// arriving as SIGINT from the line discipline to the whole foreground
// process, echoed input sharing lines with prompts, and stdout and stderr
// interleaved on one screen.
func TestChatInATerminal(t *testing.T) {
	bin := terminalAcolyte(t)
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		const fact = `{"content":"The user stopped a slow reply and then ran seq.","scope":"session"}`
		f := scriptedFunc(t, func(r modelReq) modelReply {
			switch {
			case r.Forced:
				return observe(fact)
			case r.N == 1:
				return modelReply{Hang: true} // until Ctrl-C
			case r.N == 2:
				return modelReply{Text: "Let me look.", Calls: []fakeCall{{Name: "load_tools", Args: `{"names":["run_shell"]}`}}}
			case r.N == 3:
				return modelReply{Text: "Counting to thirty.", Calls: []fakeCall{{Name: "call_tool", Args: `{"name":"run_shell","args":{"command":"seq 1 30"}}`}}}
			case r.N == 4:
				return call("call_tool", `{"name":"run_shell","args":{"command":"echo never-shown"}}`)
			default:
				return say("Counted; the other command was not allowed.")
			}
		})
		term := newTmux(t, repo, append(append([]string{bin, "chat"}, providers[p].flags(f.srv.URL)...), "--repo", repo)...)

		term.waitLine(t, "> ", "the first prompt")
		term.send(t, "count for me", "Enter")
		term.waitFor(t, "the request to reach the model", func(string) bool { return len(f.requests()) == 1 })
		term.send(t, "C-c")
		screen := term.waitLine(t, "acolyte: stopped; memories and files already written are kept", "the stopped reply")
		if !strings.Contains(screen, "stopping this reply (Ctrl-C again to leave the chat)") {
			t.Errorf("no word that the reply is being stopped:\n%s", screen)
		}
		term.waitFor(t, "a prompt after the stopped reply", func(s string) bool {
			_, after, _ := strings.Cut(s, "already written are kept\n")
			return strings.HasPrefix(after, "> ")
		})

		term.send(t, "count again", "Enter")
		term.waitLine(t, "run `seq 1 30`? [y/N] ", "the confirmation of seq")
		term.send(t, "y", "Enter")
		term.waitLine(t, "run `echo never-shown`? [y/N] ", "the confirmation of echo")
		term.send(t, "n", "Enter")
		screen = term.waitLine(t, "Counted; the other command was not allowed.", "the answer")
		lines := strings.Split(screen, "\n")
		// Streamed text ends its line before the tool line.
		follows(t, lines, "Let me look.", "→ load_tools ")
		follows(t, lines, "Counting to thirty.", "→ run_shell ")
		// The confirmation starts a line of its own; the typed answer is
		// echoed after it, and what follows starts a new line.
		follows(t, lines, "→ run_shell {\"command\":\"seq 1 30\"}", "run `seq 1 30`? [y/N] y")
		follows(t, lines, "run `seq 1 30`? [y/N] y", "  │ … 10 earlier lines")
		// The output is shown, clipped to its last lines.
		for i := 11; i <= 30; i++ {
			if !hasLine(lines, fmt.Sprintf("  │ %d", i)) {
				t.Errorf("line %d of the output is not on screen:\n%s", i, screen)
			}
		}
		if hasLine(lines, "  │ 10") || !hasLine(lines, "  exit 0") {
			t.Errorf("the output is not clipped to its last lines:\n%s", screen)
		}
		// The denial is on a line of its own, and the command did not run.
		follows(t, lines, "run `echo never-shown`? [y/N] n", "  ✗ ")
		if strings.Contains(screen, "│ never-shown") {
			t.Errorf("the denied command ran:\n%s", screen)
		}
		term.waitFor(t, "a prompt after the answer", func(s string) bool {
			_, after, _ := strings.Cut(s, "not allowed.\n")
			return strings.HasPrefix(after, "> ")
		})

		term.send(t, "C-c") // at the idle prompt: leave
		screen = term.waitLine(t, exitedLine, "the chat to exit")
		if !hasLine(strings.Split(screen, "\n"), exitedLine+"0]") {
			t.Errorf("acolyte failed:\n%s", screen)
		}
		reqs := f.requests()
		if len(reqs) != 6 || !reqs[5].Forced {
			t.Fatalf("distill did not run on the way out: %d requests", len(reqs))
		}
		term.waitLine(t, "remembered 1 observation(s):", "distill's report")
	})
}

// exitedLine starts the line the pane prints when acolyte ends, with its
// exit status. (tmux's own #{pane_dead_status} is sometimes still empty
// after the pane is marked dead.)
const exitedLine = "[acolyte exited "

// terminalAcolyte skips a terminal test without tmux and returns the
// acolyte it drives: the test binary, which TestMain put on PATH.
func terminalAcolyte(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (apt-get install tmux); the terminal test needs it")
	}
	bin, err := exec.LookPath("acolyte")
	if err != nil {
		t.Fatalf("acolyte is not on PATH: %v", err)
	}
	return bin
}

// tmux is one detached tmux server on a socket of its own, running one
// command in one pane that stays on screen after the command exits.
type tmux struct {
	socket string
}

func newTmux(t *testing.T, dir string, command ...string) *tmux {
	t.Helper()
	// A short path: unix socket paths are limited to about 100 bytes.
	sockDir, err := os.MkdirTemp("", "tmux")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	tm := &tmux{socket: filepath.Join(sockDir, "s")}
	args := []string{"new-session", "-d", "-s", "chat", "-x", "200", "-y", "60", "-c", dir}
	for _, k := range []string{"ACOLYTE_HOME", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "ACOLYTE_SESSION"} {
		args = append(args, "-e", k+"="+os.Getenv(k))
	}
	// The shell traps SIGINT with a handler, not by ignoring it, so
	// acolyte gets Ctrl-C with its default disposition while the shell
	// outlives it to print the exit status.
	command = append([]string{"sh", "-c", `trap : INT; "$@"; echo "` + exitedLine + `$?]"`, "sh"}, command...)
	// remain-on-exit is set in the same tmux command, so the pane and its
	// exit status survive however soon the command ends.
	args = append(append(args, command...), ";", "set-option", "-t", "chat", "remain-on-exit", "on")
	if out, err := tm.cmd(args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v %s", err, out)
	}
	t.Cleanup(func() { tm.cmd("kill-server").Run() })
	return tm
}

func (tm *tmux) cmd(args ...string) *exec.Cmd {
	// -f /dev/null: the user's tmux.conf must not change the terminal.
	return exec.Command("tmux", append([]string{"-f", "/dev/null", "-S", tm.socket}, args...)...)
}

func (tm *tmux) send(t *testing.T, keys ...string) {
	t.Helper()
	if out, err := tm.cmd(append([]string{"send-keys", "-t", "chat"}, keys...)...).CombinedOutput(); err != nil {
		t.Fatalf("tmux send-keys %q: %v %s", keys, err, out)
	}
}

// capture is the pane's whole screen and scrollback, wrapped lines joined
// and trailing blank lines dropped.
func (tm *tmux) capture(t *testing.T) string {
	t.Helper()
	out, err := tm.cmd("capture-pane", "-p", "-J", "-S", "-", "-t", "chat").Output()
	if err != nil {
		t.Fatalf("tmux capture-pane: %v", err)
	}
	return strings.TrimRight(string(out), "\n")
}

// waitFor polls the screen until ok holds, for at most 15 seconds.
func (tm *tmux) waitFor(t *testing.T, what string, ok func(screen string) bool) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := tm.capture(t)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 15s for %s; the screen:\n%s", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitLine waits for a line that starts with prefix (capture-pane drops
// the trailing spaces of a line, so a prompt is matched without them).
func (tm *tmux) waitLine(t *testing.T, prefix, what string) string {
	t.Helper()
	prefix = strings.TrimRight(prefix, " ")
	return tm.waitFor(t, what, func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, prefix) {
				return true
			}
		}
		return false
	})
}

func hasLine(lines []string, line string) bool {
	for _, l := range lines {
		if strings.TrimRight(l, " ") == line {
			return true
		}
	}
	return false
}

// follows checks that a line equal to first is followed by a line that
// starts with next: each began a line of its own.
func follows(t *testing.T, lines []string, first, next string) {
	t.Helper()
	for i, l := range lines[:len(lines)-1] {
		if strings.TrimRight(l, " ") == first && strings.HasPrefix(lines[i+1], next) {
			return
		}
	}
	t.Errorf("no line %q followed by a line starting %q on screen:\n%s", first, next, strings.Join(lines, "\n"))
}
