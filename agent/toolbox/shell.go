package toolbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"
)

// maxShellOutput is how much of a command's output the model sees: the head
// and the tail, since errors tend to be at the end and context at the start.
const maxShellOutput = 16 << 10

// ShellResult is the result of run_shell. A non-zero exit is a result, not a
// tool error: the model needs the output to fix what failed.
type ShellResult struct {
	ExitCode  int    `json:"exit_code"`
	Output    string `json:"output"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

func (w *Workspace) runShell() Tool {
	return Tool{
		Name:        "run_shell",
		Summary:     "run a shell command (the user must allow it)",
		Description: "Run a command with sh -c in the workspace root, e.g. to build or test. The user may refuse it. Output is stdout and stderr combined, cut to 16 KiB.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command line."},
    "timeout_seconds": {"type": "integer", "minimum": 1, "description": "Kill it after this long (default and maximum: the configured limit)."}
  },
  "required": ["command"]
}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Command        string `json:"command"`
				TimeoutSeconds int    `json:"timeout_seconds"`
			}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			if strings.TrimSpace(a.Command) == "" {
				return nil, errorf(CodeInvalidArgs, "give a command to run")
			}
			if w.Confirm == nil || !w.Confirm(a.Command) {
				return nil, errorf(CodeDenied, "the user did not allow this command; do without it or ask them to run it")
			}
			timeout := w.ShellTimeout
			if timeout <= 0 {
				timeout = 2 * time.Minute
			}
			if a.TimeoutSeconds > 0 {
				timeout = min(timeout, time.Duration(a.TimeoutSeconds)*time.Second)
			}
			return w.run(ctx, a.Command, timeout)
		},
	}
}

func (w *Workspace) run(ctx context.Context, command string, timeout time.Duration) (ShellResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = w.Root
	killGroup(cmd)
	// Children that keep the pipes open must not hang the tool after a kill.
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	res := ShellResult{}
	res.Output, res.Truncated = headTail(out.String(), maxShellOutput)
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		res.TimedOut, res.ExitCode = true, -1
	case ctx.Err() != nil:
		return res, ctx.Err()
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case err != nil:
		return res, err
	}
	return res, nil
}

func headTail(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	half := n / 2
	tail := len(s) - half
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return clip(s[:half], half) + "\n… [output cut] …\n" + s[tail:], true
}
