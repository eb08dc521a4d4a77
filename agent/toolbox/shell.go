package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"
)

// maxShellOutput is how much of a command's output the model sees: the head
// and the tail, since errors tend to be at the end and context at the start.
// The output is cut while it streams, so this is also about all the memory a
// command's output can take, however much it prints.
const maxShellOutput = 16 << 10

// shellGrace is how long a stopped command's processes have between SIGTERM
// and SIGKILL: enough to remove a lock file, not to hold up an exit.
const shellGrace = 2 * time.Second

// ShellResult is the result of run_shell. A non-zero exit is a result, not a
// tool error: the model needs the output to fix what failed.
type ShellResult struct {
	ExitCode  int    `json:"exit_code"`
	Output    string `json:"output"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// DroppedBytes is how much output between the head and the tail was
	// thrown away.
	DroppedBytes int64 `json:"dropped_bytes,omitempty"`
}

// runShell runs what the user allows and nothing guards it further: the
// path guards of the file tools (git directories, .acolyte/, what git
// trusts, .gitattributes drivers, symlinks out) bind only those tools. An
// allowed command runs as the user, in the root, with the user's
// environment, and may write .git/hooks, run git config or leave the tree;
// its only limits are a timeout, a kill of its whole process group and
// output cut to maxShellOutput. Consent is the guard, so Confirm sees the
// whole command, and acolyte run --yes, which allows every command
// unseen, is for a trusted task in a disposable checkout.
func (w *Sandbox) runShell() Tool {
	return Tool{
		Name:        "run_shell",
		Summary:     "a shell command, if allowed",
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

func (w *Sandbox) run(ctx context.Context, command string, timeout time.Duration) (ShellResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = w.Root
	killGroup(cmd)
	// Children that keep the pipes open, or a shell that ignores SIGTERM,
	// must not hang the tool after a stop: the shell is killed then.
	cmd.WaitDelay = shellGrace
	// One writer for both streams: exec then copies them from one pipe, so
	// Write is never called concurrently and the order is kept.
	out := newHeadTail(maxShellOutput)
	cmd.Stdout = out
	cmd.Stderr = out
	err := cmd.Run()
	if ctx.Err() != nil {
		// Stopped by a timeout or a signal: what the shell started is
		// stopped too, however it treats SIGTERM.
		stopGroup(cmd, shellGrace)
	}
	res := ShellResult{}
	res.Output, res.DroppedBytes = out.result()
	res.Truncated = res.DroppedBytes > 0
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

// headTail keeps the first and the last bytes written to it and counts the
// rest, holding at most its limit in memory.
type headTail struct {
	head, tail []byte
	half       int
	next       int // where the next byte goes in tail once it is full
	total      int64
}

func newHeadTail(limit int) *headTail {
	return &headTail{half: limit / 2, head: make([]byte, 0, limit/2)}
}

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	if room := h.half - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) >= h.half {
		h.tail = append(h.tail[:0], p[len(p)-h.half:]...)
		h.next = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(h.tail) < h.half {
			k := min(h.half-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(h.tail[h.next:], p)
		h.next = (h.next + k) % h.half
		p = p[k:]
	}
	return n, nil
}

// result returns the output the model sees, with a marker where bytes were
// dropped, cut only between UTF-8 characters, and how many were dropped.
func (h *headTail) result() (string, int64) {
	tail := append(append([]byte{}, h.tail[h.next:]...), h.tail[:h.next]...)
	dropped := h.total - int64(len(h.head)) - int64(len(tail))
	if dropped == 0 {
		return strings.ToValidUTF8(string(h.head)+string(tail), "\uFFFD"), 0
	}
	head := h.head
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.FullRune(head[lastRuneStart(head):]); i++ {
		head = head[:lastRuneStart(head)]
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	dropped = h.total - int64(len(head)) - int64(len(tail))
	s := fmt.Sprintf("%s\n… [%d bytes of output dropped; rerun with a filter such as grep, head or tail to see them] …\n%s", head, dropped, tail)
	return strings.ToValidUTF8(s, "\uFFFD"), dropped
}

// lastRuneStart is where the last, possibly incomplete, character of b begins.
func lastRuneStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && len(b)-i < utf8.UTFMax && !utf8.RuneStart(b[i]) {
		i--
	}
	return max(i, 0)
}
