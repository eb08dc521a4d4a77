// Package transcript shows an agent's turn in a terminal as it happens:
// the model's text on stdout, and tool calls, a shell command's output and
// the session's notices on stderr, each escaped, so that nothing a model
// or a cloned file prints can drive the terminal. Or JSON lines, one
// agent.Event each, for a script.
package transcript

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/internal/termtext"
)

// Printer returns the function that shows each event of a turn: JSON
// lines on stdout, or the model's text on stdout and tool activity on
// stderr.
func Printer(stdout, stderr io.Writer, asJSON bool) func(agent.Event) {
	if asJSON {
		enc := json.NewEncoder(stdout)
		return func(e agent.Event) { _ = enc.Encode(e) }
	}
	return NewText(stdout, stderr).Print
}

// NewText returns a Text printing to stdout and stderr.
func NewText(stdout, stderr io.Writer) *Text { return &Text{stdout: stdout, stderr: stderr} }

// Text keeps streamed text and tool activity on lines of their own:
// it remembers whether stdout was left in the middle of a line.
type Text struct {
	stdout, stderr io.Writer
	midLine        bool
}

// EndLine ends the line stdout was left in the middle of, if any.
func (p *Text) EndLine() {
	if p.midLine {
		fmt.Fprintln(p.stdout)
		p.midLine = false
	}
}

// Print shows one event.
func (p *Text) Print(e agent.Event) {
	switch e.Type {
	case agent.EventText:
		fmt.Fprint(p.stdout, termtext.EscapeText(e.Text))
		if e.Text != "" {
			p.midLine = !strings.HasSuffix(e.Text, "\n")
		}
	case agent.EventToolCall:
		p.EndLine()
		fmt.Fprintf(p.stderr, "→ %s %s\n", termtext.Escape(e.Tool), termtext.OneLine(string(e.Args), 120))
	case agent.EventToolResult:
		switch {
		case e.IsError:
			fmt.Fprintf(p.stderr, "  ✗ %s\n", termtext.OneLine(string(e.Result), 160))
		case e.Tool == "run_shell":
			var r toolbox.ShellResult
			if json.Unmarshal(e.Result, &r) == nil {
				printShell(p.stderr, r)
			}
		}
	case agent.EventFinal:
		p.EndLine()
	case agent.EventError:
		p.EndLine()
	case agent.EventCompact:
		fmt.Fprintf(p.stderr, "· %s\n", termtext.EscapeText(e.Text))
	case agent.EventWarning:
		p.EndLine()
		msg := e.Text
		if e.Error != "" {
			msg = e.Error
		}
		fmt.Fprintf(p.stderr, "acolyte: warning: %s\n", termtext.EscapeText(msg))
	case agent.EventRetry:
		p.EndLine()
		fmt.Fprintf(p.stderr, "acolyte: %s\n", termtext.EscapeText(e.Text))
	case agent.EventSession:
		if e.Text != "" {
			fmt.Fprintf(p.stderr, "session %s: %s\n", e.Session, e.Text)
		}
		fmt.Fprintf(p.stderr, "session %s (resume with --resume %s)\n", e.Session, e.Session)
	case agent.EventDistilling:
		p.EndLine()
		fmt.Fprintln(p.stderr, "· distilling what this session learnt (Ctrl-C skips it)")
	case agent.EventDistill:
		p.EndLine()
		if n := len(e.Distill.Added); n > 0 {
			fmt.Fprintf(p.stderr, "remembered %d observation(s):\n", n)
			for _, m := range e.Distill.Added {
				fmt.Fprintf(p.stderr, "  %s [%s] %s\n", m.ID, m.Scope, termtext.OneLine(m.Content, 100))
			}
		}
		for _, f := range e.Distill.Skipped {
			if f.DuplicateOf == "" && f.Reason != "repeated in this distill" {
				fmt.Fprintf(p.stderr, "  not stored: %s (%s)\n", termtext.OneLine(f.Content, 80), termtext.OneLine(f.Reason, 160))
			}
		}
	}
}

// shellLines is how much of a command's output chat and run show; the
// model sees all of it (up to the tool's own cap).
const shellLines = 20

// shellLineBytes is how much of one output line is shown: a minified file
// or a progress bar is one line of many kilobytes.
const shellLineBytes = 240

// clipLine cuts l to about n bytes, at a character, saying what it cut.
func clipLine(l string, n int) string {
	if len(l) <= n {
		return l
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(l[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", l[:cut], len(l)-cut)
}

func printShell(w io.Writer, r toolbox.ShellResult) {
	lines := strings.Split(strings.TrimRight(r.Output, "\n"), "\n")
	if r.Output == "" {
		lines = nil
	}
	skipped := 0
	if len(lines) > shellLines {
		skipped = len(lines) - shellLines
		lines = lines[skipped:]
	}
	switch {
	case r.DroppedBytes > 0:
		fmt.Fprintf(w, "  │ … %d earlier lines, and %d bytes the tool dropped from the middle of the output\n", skipped, r.DroppedBytes)
	case skipped > 0:
		fmt.Fprintf(w, "  │ … %d earlier lines\n", skipped)
	}
	for _, l := range lines {
		// A command's output may be a cloned file's, escapes included.
		fmt.Fprintf(w, "  │ %s\n", termtext.EscapeText(clipLine(l, shellLineBytes)))
	}
	fmt.Fprintf(w, "  exit %d\n", r.ExitCode)
}
