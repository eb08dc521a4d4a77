package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
)

// A turn as the user sees it: streamed text on stdout, ended before any
// tool line; tool activity on stderr; nothing a model or a command prints
// reaches the terminal as an escape sequence.
func TestTextKeepsStreamsApartAndEscapesWhatItShows(t *testing.T) {
	var out, errs bytes.Buffer
	show := Printer(&out, &errs, false)
	shell, _ := json.Marshal(toolbox.ShellResult{ExitCode: 2, Output: "ok\n\x1b]0;pwned\x07title\n"})
	for _, e := range []agent.Event{
		{Type: agent.EventText, Text: "Looking \x1b[31mnow"},
		{Type: agent.EventToolCall, Tool: "run_shell", Args: json.RawMessage(`{"command":"go test"}`)},
		{Type: agent.EventToolResult, Tool: "run_shell", Result: shell},
		{Type: agent.EventText, Text: "Done.\n"},
		{Type: agent.EventFinal},
	} {
		show(e)
	}
	if strings.ContainsRune(out.String()+errs.String(), '\x1b') || strings.ContainsRune(errs.String(), '\x07') {
		t.Errorf("an escape reached the terminal:\nstdout %q\nstderr %q", out.String(), errs.String())
	}
	if !strings.HasPrefix(out.String(), "Looking ") || !strings.Contains(out.String(), "now\nDone.\n") {
		t.Errorf("stdout = %q: the text before the tool call was not ended on its own line", out.String())
	}
	if !strings.Contains(errs.String(), "→ run_shell") || !strings.Contains(errs.String(), "  exit 2\n") {
		t.Errorf("stderr = %q, want the call and the command's exit status", errs.String())
	}
}

// A long command output shows its last lines, each clipped, and says what
// it left out; the model still has all of it.
func TestShellOutputShowsItsTailClipped(t *testing.T) {
	var lines []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf("line %d %s", i, strings.Repeat("é", 200)))
	}
	var errs bytes.Buffer
	printShell(&errs, toolbox.ShellResult{Output: strings.Join(lines, "\n") + "\n", DroppedBytes: 7})
	got := errs.String()
	if !strings.Contains(got, "… 30 earlier lines, and 7 bytes the tool dropped") {
		t.Errorf("no note of what was left out:\n%s", got)
	}
	if strings.Contains(got, "line 29 ") || !strings.Contains(got, "line 30 ") || !strings.Contains(got, "line 49 ") {
		t.Errorf("not the last %d lines:\n%s", shellLines, got)
	}
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		if len(l) > shellLineBytes+40 {
			t.Fatalf("a line of %d bytes was shown whole: %q", len(l), l)
		}
	}
}

// JSON mode writes each event as one line a script can decode.
func TestJSONWritesOneEventPerLine(t *testing.T) {
	var out bytes.Buffer
	show := Printer(&out, nil, true)
	show(agent.Event{Type: agent.EventText, Text: "hi"})
	show(agent.Event{Type: agent.EventFinal})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines: %q", len(lines), out.String())
	}
	var e agent.Event
	if err := json.Unmarshal([]byte(lines[0]), &e); err != nil || e.Type != agent.EventText || e.Text != "hi" {
		t.Errorf("first line %q decodes to %+v (%v)", lines[0], e, err)
	}
}
