package toolbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A trusted path is refused before it exists (a hooks folder git would
// run from, a config file git would include), through a symlink, and in
// another case; what lies beside it is not.
func TestTrustedPathsAreRefusedToWrite(t *testing.T) {
	w, _ := newTestWorkspace(t)
	w.Trust = trusting(
		Trusted{Path: filepath.Join(w.Root, ".githooks"), Dir: true, Why: "git runs hooks from it"},
		Trusted{Path: filepath.Join(w.Root, "tools", "git.config"), Why: "git includes it as config"},
		Trusted{Path: filepath.Join(filepath.Dir(w.Root), "outside"), Dir: true, Why: "not in the workspace"},
	)
	if err := os.MkdirAll(filepath.Join(w.Root, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("tools", filepath.Join(w.Root, "link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	tools := w.Tools()
	for _, p := range []string{".githooks/pre-commit", ".GitHooks/pre-push", "src/../.githooks/x/y", "tools/git.config", "link/git.config", "TOOLS/git.config"} {
		_, err := callTool(t, tools, "write_file", map[string]any{"path": p, "content": "[core]\n\tfsmonitor = evil\n"})
		wantCode(t, err, CodeDenied)
		if err != nil && !strings.Contains(err.Error(), "git") {
			t.Errorf("%s: the refusal does not say why: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(w.Root, ".githooks")); err == nil {
		t.Error("the hooks folder was created")
	}
	for _, p := range []string{".githooks.md", "tools/git.config.md", "tools/other"} {
		if _, err := callTool(t, tools, "write_file", map[string]any{"path": p, "content": "ok\n"}); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func trusting(ts ...Trusted) func(context.Context, string) ([]Trusted, error) {
	return func(context.Context, string) ([]Trusted, error) { return ts, nil }
}

// When git cannot say what it trusts, nothing is written: the file git
// fails on could be the one the model is about to make valid.
func TestTrustFailureRefusesWrites(t *testing.T) {
	w, _ := newTestWorkspace(t)
	w.Trust = func(context.Context, string) ([]Trusted, error) {
		return nil, errors.New("git config: bad config line 1 in file .gitconfig")
	}
	_, err := callTool(t, w.Tools(), "write_file", map[string]any{"path": ".gitconfig", "content": "[core]\n"})
	wantCode(t, err, CodeDenied)
	if err == nil || !strings.Contains(err.Error(), "bad config line") {
		t.Fatalf("the refusal does not say what failed: %v", err)
	}
	if _, err := callTool(t, w.Tools(), "read_file", map[string]any{"path": "missing"}); AsError(err).Code != CodeNotFound {
		t.Fatalf("reads do not need git's answer: %v", err)
	}
}
