// Package tokencheck checks the agent's budget estimate, agent.BytesPerToken,
// against real BPE tokenizers. It is a module of its own so that the
// tokenizers' data (a few MB, embedded by tiktoken-go-loader, no download
// at run time) is never a dependency of acolyte: `cd agent/internal/tokencheck
// && go test -v .` runs it, and .ci/run does.
package tokencheck

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/internal/agenttest"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
)

// samples are what requests carry, as they travel: the first request's
// system prompt and declarations, the repository's own Go and Markdown as
// read_file results (JSON-escaped), and the quote-heavy one-line file of
// the harness.
func samples(t *testing.T) map[string]string {
	t.Helper()
	root, _ := filepath.Abs("../../..")
	tk, _ := agenttest.Open(t)
	ws, err := toolbox.NewSandbox(root)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := agent.Prompt(context.Background(), tk, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	decls, _ := json.Marshal(rep.Tools)
	out := map[string]string{"first request": rep.System + string(decls)}
	var code, docs strings.Builder
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		ext := filepath.Ext(p)
		if ext != ".go" && ext != ".md" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		b, _ := json.Marshal(toolbox.FileContent{Path: p, Content: string(data)})
		if ext == ".go" {
			code.Write(b)
		} else {
			docs.Write(b)
		}
		return nil
	})
	out["Go source as read_file results"] = code.String()
	out["Markdown as read_file results"] = docs.String()
	line, _ := json.Marshal(toolbox.FileContent{Path: "big.txt", Content: strings.Repeat("0123456789abcdef\"é", 64<<10/19)})
	out["quote-heavy line as a read_file result"] = string(line)
	return out
}

// windowTokens is the context window the default budget is sized for.
const windowTokens = 128_000

// TestBytesPerTokenIsConservative: on real text (the first request, the
// repository's code and docs as read_file results) each tokenizer finds at
// least agent.BytesPerToken bytes a token, so the estimate never counts
// fewer tokens than the model sees. On text made to tokenize badly (the
// quote-heavy line) it may count fewer, but a request at the default
// budget still fits a 128k window.
func TestBytesPerTokenIsConservative(t *testing.T) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	adversarial := float64(agent.BytesPerToken) * agent.DefaultContextBudget / windowTokens
	for _, enc := range []string{"cl100k_base", "o200k_base"} {
		tke, err := tiktoken.GetEncoding(enc)
		if err != nil {
			t.Fatal(err)
		}
		for name, text := range samples(t) {
			n := len(tke.Encode(text, nil, nil))
			ratio := float64(len(text)) / float64(n)
			t.Logf("%s, %s: %d bytes, %d tokens, %.2f bytes a token", enc, name, len(text), n, ratio)
			floor := float64(agent.BytesPerToken)
			if strings.HasPrefix(name, "quote-heavy") {
				floor = adversarial
			}
			if ratio < floor {
				t.Errorf("%s, %s: %.2f bytes a token, under %.2f: the budget would under-count", enc, name, ratio, floor)
			}
		}
	}
}
