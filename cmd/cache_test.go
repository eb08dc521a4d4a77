package cmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/cmd"
)

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// promptOrder re-serialises a request body in the order the provider lays
// the prompt out for its prefix cache: the system prompt, then the tool
// declarations, then the conversation. JSON object keys carry no order to
// the provider (the Gemini SDK even sorts them, putting contents before
// tools), so a prefix of the raw body says nothing about what the
// provider's cache can reuse; a prefix of this does.
func promptOrder(t *testing.T, provider int, body string) string {
	t.Helper()
	var wire map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &wire); err != nil {
		t.Fatalf("request is not JSON: %v", err)
	}
	if providers[provider].name == "gemini" {
		return string(wire["systemInstruction"]) + string(wire["tools"]) + string(wire["contents"])
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(wire["messages"], &msgs); err != nil || len(msgs) == 0 {
		t.Fatalf("openai request without messages: %s", body)
	}
	rest, _ := json.Marshal(msgs[1:])
	return string(msgs[0]) + string(wire["tools"]) + string(rest)
}

// TestLoadToolsKeepsThePromptCache runs a task that loads run_shell in its
// middle and measures, for each request, how much of it a provider's
// prefix cache can reuse from the request before: the longest common
// prefix in prompt order (system, tools, conversation). The figures in the
// commit and report come from
// `go test -v -run TestLoadToolsKeepsThePromptCache ./cmd/`.
func TestLoadToolsKeepsThePromptCache(t *testing.T) {
	eachProvider(t, func(t *testing.T, p int) {
		repo := agentRepo(t)
		for i := range 4 {
			os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%d.go", i)), []byte(strings.Repeat(fmt.Sprintf("// line of file %d\n", i), 200)), 0o644)
		}
		const loadAt = 5
		f := scriptedFunc(t, func(r modelReq) modelReply {
			switch {
			case r.Forced:
				return observe()
			case r.N < loadAt:
				return call("read_file", fmt.Sprintf(`{"path":"f%d.go"}`, r.N-1))
			case r.N == loadAt:
				return call("load_tools", `{"names":["run_shell"]}`)
			case r.N < loadAt+3:
				if r.N > loadAt+1 && (len(r.Results) != 1 || !strings.Contains(r.Results[0], fmt.Sprintf(`"output":"ran %d\n"`, r.N-1))) {
					t.Errorf("request %d: the shell did not run through call_tool: %v", r.N, r.Results)
				}
				return call("call_tool", fmt.Sprintf(`{"name":"run_shell","args":{"command":"echo ran %d"}}`, r.N))
			default:
				return say("Done.")
			}
		})
		code, _, stderr := runAgent(t, f, p, repo, "run", "--yes", "--json", "read the files, then run something")
		if code != cmd.ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		reqs := f.requests()
		var table strings.Builder
		fmt.Fprintf(&table, "\n%s: request | tools | bytes | reused prefix (prompt order) | reused prefix (raw body)\n", providers[p].name)
		prevReused, sent, reusedSum := 0, 0, 0
		for i, r := range reqs {
			if r.Forced {
				break // distill changes the tool choice; it is not part of the task
			}
			reused, raw := 0, 0
			if i > 0 {
				prev := reqs[i-1]
				reused = commonPrefix(promptOrder(t, p, prev.Body), promptOrder(t, p, r.Body))
				raw = commonPrefix(prev.Body, r.Body)
				// What the provider caches is the previous request whole,
				// less what the conversation's last turn changes: the
				// reuse may grow or stay, but loading tools must not cut
				// it back to before the conversation.
				if reused < prevReused {
					t.Errorf("request %d (tools %v) reuses %d bytes, less than the %d before: the prefix cache lost the conversation", r.N, r.Tools, reused, prevReused)
				}
			}
			prevReused = reused
			if i > 0 {
				sent, reusedSum = sent+len(r.Body), reusedSum+reused
			}
			fmt.Fprintf(&table, "%7d | %5d | %5d | %28d | %24d\n", r.N, len(r.Tools), len(r.Body), reused, raw)
		}
		fmt.Fprintf(&table, "requests 2-%d: %d bytes sent, %d (%.0f%%) a reusable prefix\n", len(reqs)-1, sent, reusedSum, 100*float64(reusedSum)/float64(sent))
		t.Log(table.String())
	})
}
