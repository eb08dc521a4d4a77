package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestChatConsentCannotBeTypedAhead drives chat in a real terminal: a "y"
// typed while the model works is not the answer to a confirmation shown
// later; it and the message typed after it go to the model, in order, as
// the next messages. Ctrl-C at the confirmation refuses the command and
// stops the reply, and the chat goes on; an answer typed after the
// confirmation is shown is taken.
func TestChatConsentCannotBeTypedAhead(t *testing.T) {
	bin := terminalAcolyte(t)
	repo := agentRepo(t)
	release := make(chan struct{})
	const ahead = "touch typed-ahead-ran; printf '\\033]52;c;aGk=\\007'"
	f := scriptedFunc(t, func(r modelReq) modelReply {
		switch {
		case r.Forced:
			return observe()
		case r.N == 1:
			<-release // the model is working while the user types ahead
			return call("load_tools", `{"names":["run_shell"]}`)
		case r.N == 2:
			return call("call_tool", `{"name":"run_shell","args":{"command":"`+strings.ReplaceAll(ahead, `\`, `\\`)+`"}}`)
		case r.N == 3:
			return say("A message, not an answer.")
		case r.N == 4:
			return call("call_tool", `{"name":"run_shell","args":{"command":"echo answered-after"}}`)
		default:
			return say("Done.")
		}
	})
	term := newTmux(t, repo, append(append([]string{bin, "chat"}, providers[0].flags(f.srv.URL)...), "--repo", repo)...)

	term.waitLine(t, "> ", "the first prompt")
	term.send(t, "do the thing", "Enter")
	term.waitFor(t, "the request to reach the model", func(string) bool { return len(f.requests()) == 1 })
	term.send(t, "y", "Enter")
	term.send(t, "what did you find", "Enter")
	term.send(t, "half typed") // no Enter: still being typed when the confirmation shows
	time.Sleep(300 * time.Millisecond)
	close(release)

	// The whole command is shown, escaped, and waits: the typed-ahead y
	// did not answer it.
	shown := "run `touch typed-ahead-ran; printf '\\033]52;c;aGk=\\007'`? [y/N]"
	term.waitLine(t, shown, "the confirmation")
	time.Sleep(500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(repo, "typed-ahead-ran")); err == nil {
		t.Fatalf("the typed-ahead y ran the command:\n%s", term.capture(t))
	}
	screen := term.capture(t)
	if !strings.HasSuffix(strings.TrimRight(screen, " "), shown) {
		t.Fatalf("the confirmation is not waiting for an answer:\n%s", screen)
	}

	// Ctrl-C at the confirmation: no, and the reply stops.
	term.send(t, "C-c")
	term.waitLine(t, "acolyte: stopped; memories and files already written are kept", "the stopped reply")
	// The queued lines reach the model as the next messages, in order.
	term.waitFor(t, "the reply to the typed-ahead y", func(s string) bool { return strings.Contains(s, "\n> y\nA message, not an answer.\n") })
	term.waitFor(t, "the queued message to reach the model", func(string) bool { return len(f.requests()) >= 4 })
	reqs := f.requests()
	if reqs[2].UserText != "y" || reqs[3].UserText != "what did you find" {
		t.Fatalf("queued messages reached the model as %q and %q", reqs[2].UserText, reqs[3].UserText)
	}
	if strings.Contains(reqs[3].UserText, "half typed") {
		t.Errorf("the half-typed line was kept: %q", reqs[3].UserText)
	}

	// An answer typed after the confirmation is shown is taken.
	term.waitLine(t, "run `echo answered-after`? [y/N] ", "the second confirmation")
	term.send(t, "y", "Enter")
	term.waitLine(t, "  │ answered-after", "the command's output")
	term.waitLine(t, "Done.", "the last reply")
	if _, err := os.Stat(filepath.Join(repo, "typed-ahead-ran")); err == nil {
		t.Fatalf("the refused command ran:\n%s", term.capture(t))
	}
	term.waitFor(t, "a prompt after the last reply", func(s string) bool { return strings.HasSuffix(strings.TrimRight(s, " "), "Done.\n>") })
	term.send(t, "C-c")
	screen = term.waitLine(t, exitedLine, "the chat to exit")
	if strings.Contains(screen, "\x1b") {
		t.Errorf("a raw escape reached the screen:\n%q", screen)
	}
}

// TestChatCtrlCAtConfirmation: Ctrl-C at a confirmation (nothing typed
// ahead) refuses the command and stops the reply, and the next line typed
// is a message again, not a late answer to that confirmation.
func TestChatCtrlCAtConfirmation(t *testing.T) {
	bin := terminalAcolyte(t)
	repo := agentRepo(t)
	f := scriptedFunc(t, func(r modelReq) modelReply {
		switch {
		case r.Forced:
			return observe()
		case r.N == 1:
			return modelReply{Calls: []fakeCall{{Name: "load_tools", Args: `{"names":["run_shell"]}`}}}
		case r.N == 2:
			return call("call_tool", `{"name":"run_shell","args":{"command":"touch refused-ran"}}`)
		default:
			return say("Heard: " + r.UserText)
		}
	})
	term := newTmux(t, repo, append(append([]string{bin, "chat"}, providers[0].flags(f.srv.URL)...), "--repo", repo)...)
	term.waitLine(t, "> ", "the first prompt")
	term.send(t, "make a file", "Enter")
	term.waitLine(t, "run `touch refused-ran`? [y/N] ", "the confirmation")
	term.send(t, "C-c")
	term.waitLine(t, "acolyte: stopped; memories and files already written are kept", "the stopped reply")
	term.waitFor(t, "a prompt after the stopped reply", func(s string) bool {
		return strings.HasSuffix(strings.TrimRight(s, " "), "already written are kept\n>")
	})
	term.send(t, "y", "Enter")
	term.waitLine(t, "Heard: y", "the next line to reach the model as a message")
	if _, err := os.Stat(filepath.Join(repo, "refused-ran")); err == nil {
		t.Fatalf("the refused command ran:\n%s", term.capture(t))
	}
	term.waitFor(t, "a prompt after the reply", func(s string) bool { return strings.HasSuffix(strings.TrimRight(s, " "), "Heard: y\n>") })
	term.send(t, "C-c")
	screen := term.waitLine(t, exitedLine, "the chat to exit")
	if !hasLine(strings.Split(screen, "\n"), exitedLine+"0]") {
		t.Errorf("acolyte failed:\n%s", screen)
	}
}
