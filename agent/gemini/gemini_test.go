package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/gemini"
	"github.com/acolyte-dev/acolyte/agent/internal/agenttest"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

const agentsRule = "Always wrap errors with %w and never panic in library code."

type harness struct {
	fake   *fakeGemini
	tk     memory.Scoped
	ws     *toolbox.Sandbox
	events []agent.Event
	mu     sync.Mutex
}

// setup builds a repository with an AGENTS.md, a real memory store holding
// that rule, and a Gemini model pointed at the fake.
func setup(t *testing.T, steps ...script) (*harness, agent.Config) {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("# Rules\n\n"+agentsRule+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := toolbox.NewSandbox(root)
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := agenttest.Open(t)
	agenttest.Add(t, tk, memory.ScopeProject, memory.KindRule, agentsRule)
	h := &harness{fake: newFake(t, steps...), tk: tk, ws: ws}
	m, err := gemini.New(context.Background(), gemini.Config{APIKey: "test-key", BaseURL: h.fake.srv.URL, RetryDelaySeconds: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	cfg := agent.Config{Model: m, Toolkit: tk, Sandbox: ws, OnEvent: func(e agent.Event) {
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
	}}
	t.Cleanup(func() { h.checkNoInjection(t) })
	return h, cfg
}

// checkNoInjection asserts the product's premise on every request the model
// saw: memories and AGENTS.md are searched, never put in the system prompt.
func (h *harness) checkNoInjection(t *testing.T) {
	mems, err := h.tk.List(context.Background(), memory.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for i, req := range h.fake.seen() {
		sys := req.system()
		if sys == "" {
			t.Errorf("request %d has no systemInstruction", i)
		}
		if strings.Contains(sys, agentsRule) {
			t.Errorf("request %d: AGENTS.md text is in the system instruction", i)
		}
		for _, m := range mems {
			if strings.Contains(sys, m.Content) {
				t.Errorf("request %d: memory %q is in the system instruction", i, m.Content)
			}
		}
		if req.apiKey != "test-key" {
			t.Errorf("request %d sent API key %q", i, req.apiKey)
		}
	}
}

func responseOf(t *testing.T, req wireRequest, tool string) map[string]any {
	t.Helper()
	for _, r := range req.lastResponses() {
		if r.Name == tool {
			return r.Response
		}
	}
	t.Fatalf("request carries no functionResponse for %s: %+v", tool, req.Contents[len(req.Contents)-1])
	return nil
}

func TestSearchThenAnswer(t *testing.T) {
	var answer string
	h, cfg := setup(t,
		func(t *testing.T, req wireRequest) reply {
			if got := req.declared(); !contains(got, "memory_search") || !contains(got, "load_tools") || contains(got, "edit_file") {
				t.Errorf("first request declares %v", got)
			}
			if len(req.Contents) != 1 || req.Contents[0].Role != "user" || req.Contents[0].Parts[0].Text != "How should errors be handled here?" {
				t.Errorf("first contents: %+v", req.Contents)
			}
			return calls(fcall("memory_search", map[string]any{"query": "error handling conventions"}))
		},
		func(t *testing.T, req wireRequest) reply {
			resp := responseOf(t, req, "memory_search")
			mems, _ := resp["memories"].([]any)
			if len(mems) == 0 {
				t.Fatalf("memory_search returned nothing: %v", resp)
			}
			answer = "Per the project rules: " + mems[0].(map[string]any)["content"].(string)
			return text(answer)
		},
	)
	s, err := agent.NewSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Turn(context.Background(), "How should errors be handled here?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != answer || !strings.Contains(res.Text, agentsRule) || res.Steps != 2 || res.Incomplete {
		t.Fatalf("result %+v", res)
	}
	if res.Usage.InputTokens != 101+102 || res.Usage.OutputTokens != 14 {
		t.Fatalf("usage %+v", res.Usage)
	}
	var types []string
	for _, e := range h.events {
		types = append(types, string(e.Type))
	}
	if got := strings.Join(types, ","); got != "usage,tool_call,tool_result,text,usage,final" {
		t.Fatalf("events %s", got)
	}
}

func TestAddMemory(t *testing.T) {
	h, cfg := setup(t,
		func(t *testing.T, req wireRequest) reply {
			return calls(fcall("memory_add", map[string]any{"content": "The user wants commit messages in the imperative mood.", "scope": "user", "topic": "git"}))
		},
		func(t *testing.T, req wireRequest) reply {
			if id, _ := responseOf(t, req, "memory_add")["id"].(string); id == "" {
				t.Errorf("memory_add answered without an id")
			}
			return text("Noted.")
		},
	)
	s, _ := agent.NewSession(cfg)
	if _, err := s.Turn(context.Background(), "Remember: imperative commit messages, everywhere."); err != nil {
		t.Fatal(err)
	}
	got, err := h.tk.List(context.Background(), memory.Filter{Scope: memory.ScopeUser})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Topic != "git" || got[0].Source != "agent" || got[0].Kind != memory.KindStored {
		t.Fatalf("user memories: %+v", got)
	}
}

func TestRemoveStaleMemory(t *testing.T) {
	var stale memory.Memory
	h, cfg := setup(t,
		func(t *testing.T, req wireRequest) reply {
			return calls(fcall("memory_search", map[string]any{"query": "lint command"}))
		},
		func(t *testing.T, req wireRequest) reply {
			for _, m := range responseOf(t, req, "memory_search")["memories"].([]any) {
				if mm := m.(map[string]any); strings.Contains(mm["content"].(string), "golint") {
					return calls(fcall("memory_remove", map[string]any{"id": mm["id"]}))
				}
			}
			t.Fatal("the stale memory was not found")
			return reply{}
		},
		func(t *testing.T, req wireRequest) reply {
			removed := responseOf(t, req, "memory_remove")["removed"].([]any)
			if len(removed) != 1 || removed[0].(map[string]any)["id"] != stale.ID {
				t.Errorf("removed %v", removed)
			}
			return text("Removed the outdated golint note.")
		},
	)
	stale = agenttest.Add(t, h.tk, memory.ScopeProject, memory.KindStored, "Lint command: golint ./...")
	s, _ := agent.NewSession(cfg)
	if _, err := s.Turn(context.Background(), "golint is gone, we use go vet; fix memory"); err != nil {
		t.Fatal(err)
	}
	left, _ := h.tk.List(context.Background(), memory.Filter{})
	for _, m := range left {
		if m.ID == stale.ID {
			t.Fatal("stale memory is still stored")
		}
	}
	if len(left) != 1 {
		t.Fatalf("removing one memory changed others: %+v", left)
	}
}

func TestSandboxErrorReachesModel(t *testing.T) {
	h, cfg := setup(t,
		func(t *testing.T, req wireRequest) reply {
			return calls(fcall("read_file", map[string]any{"path": "../../etc/passwd"}))
		},
		func(t *testing.T, req wireRequest) reply {
			e, _ := responseOf(t, req, "read_file")["error"].(map[string]any)
			if e["code"] != toolbox.CodeOutsideWorkspace || !strings.Contains(e["message"].(string), "outside the workspace") {
				t.Errorf("read_file response: %v", e)
			}
			return text("I cannot read files outside the repository.")
		},
	)
	s, _ := agent.NewSession(cfg)
	res, err := s.Turn(context.Background(), "show me /etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text == "" {
		t.Fatal("no final answer")
	}
	var sawErr bool
	for _, e := range h.events {
		sawErr = sawErr || (e.Type == agent.EventToolResult && e.IsError && strings.Contains(string(e.Result), "outside_workspace"))
	}
	if !sawErr {
		t.Fatal("no tool_result event carried the sandbox error")
	}
}

func TestDistillWritesObservationsALaterSearchFinds(t *testing.T) {
	h, cfg := setup(t,
		func(t *testing.T, req wireRequest) reply {
			return calls(fcall("list_files", map[string]any{"pattern": "**/*.go"}))
		},
		func(t *testing.T, req wireRequest) reply { return text("There is one Go file, main.go.") },
		// The observer call.
		func(t *testing.T, req wireRequest) reply {
			if got := req.declared(); len(got) != 1 || got[0] != "memory_observe" {
				t.Errorf("observer declares %v", got)
			}
			transcript := req.Contents[0].Parts[0].Text
			if !strings.Contains(transcript, "list_files") || !strings.Contains(transcript, "main.go") {
				t.Errorf("transcript lacks the session: %s", transcript)
			}
			return calls(fcall("memory_observe", map[string]any{"facts": []any{
				map[string]any{"content": "The demo repository's only Go file is main.go at the root.", "scope": "project", "topic": "layout"},
				map[string]any{"content": "always wrap errors with %w and never panic in library code", "scope": "project"},
				map[string]any{"content": "Always wrap errors with %w, and never panic in the library code.", "scope": "project"},
				map[string]any{"content": "x", "scope": "galaxy"},
			}}))
		},
		// A later session searches.
		func(t *testing.T, req wireRequest) reply {
			return calls(fcall("memory_search", map[string]any{"query": "where are the Go files", "kind": "observation"}))
		},
		func(t *testing.T, req wireRequest) reply {
			mems := responseOf(t, req, "memory_search")["memories"].([]any)
			if len(mems) != 1 || !strings.Contains(mems[0].(map[string]any)["content"].(string), "main.go") {
				t.Errorf("later search found %v", mems)
			}
			return text("main.go")
		},
	)
	s, _ := agent.NewSession(cfg)
	ctx := context.Background()
	if _, err := s.Turn(ctx, "What Go files are there?"); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Distill(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Added) != 1 || rep.Added[0].Kind != memory.KindObservation || rep.Added[0].Source != agent.SourceDistill || rep.Added[0].Topic != "layout" {
		t.Fatalf("added %+v", rep.Added)
	}
	reasons := map[string]int{}
	for _, sk := range rep.Skipped {
		reasons[strings.SplitN(sk.Reason, " ", 2)[0]]++
	}
	// The rule restated in other case and the reworded rule are both
	// near-duplicates of the stored rule; the bad scope is refused.
	if reasons["near-duplicate"] != 2 || reasons["unknown"] != 1 {
		t.Fatalf("skipped %+v", rep.Skipped)
	}

	later, _ := agent.NewSession(cfg)
	if _, err := later.Turn(ctx, "Where is the code?"); err != nil {
		t.Fatal(err)
	}
	_ = h
}

func TestDeferredToolsLoadOnDemand(t *testing.T) {
	var first []string
	h, cfg := setup(t,
		func(t *testing.T, req wireRequest) reply {
			first = req.declared()
			return calls(fcall("load_tools", map[string]any{"names": []any{"edit_file"}}))
		},
		func(t *testing.T, req wireRequest) reply {
			// The declarations stay as they were, for the prompt cache;
			// the loaded tool's parameters come as load_tools' result.
			if got := req.declared(); strings.Join(got, ",") != strings.Join(first, ",") {
				t.Errorf("after load_tools: %v, before %v", got, first)
			}
			loaded, _ := json.Marshal(responseOf(t, req, "load_tools"))
			if !strings.Contains(string(loaded), `"name":"edit_file"`) || !strings.Contains(string(loaded), `"old"`) {
				t.Errorf("load_tools did not give edit_file's parameters: %s", loaded)
			}
			return calls(fcall("call_tool", map[string]any{"name": "edit_file", "args": map[string]any{"path": "main.go", "old": "package main", "new": "package app"}}))
		},
		func(t *testing.T, req wireRequest) reply {
			if _, isErr := responseOf(t, req, "call_tool")["error"]; isErr {
				t.Errorf("edit failed: %v", responseOf(t, req, "call_tool"))
			}
			return text("Renamed the package.")
		},
	)
	s, _ := agent.NewSession(cfg)
	if _, err := s.Turn(context.Background(), "rename the package to app"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(h.ws.Root, "main.go"))
	if string(b) != "package app\n" {
		t.Fatalf("main.go = %q", b)
	}
}

func TestStepBudgetStopsRunawayLoop(t *testing.T) {
	loop := func(t *testing.T, req wireRequest) reply {
		return calls(fcall("list_files", map[string]any{}))
	}
	_, cfg := setup(t, loop, loop, loop)
	cfg.MaxSteps = 3
	s, _ := agent.NewSession(cfg)
	res, err := s.Turn(context.Background(), "loop forever")
	if !errors.Is(err, agent.ErrStepLimit) || !strings.Contains(err.Error(), "after 3 steps") {
		t.Fatalf("err %v, want the step limit", err)
	}
	if !res.Incomplete || res.Steps != 3 {
		t.Fatalf("result %+v", res)
	}
}

func TestStreamingDeliversTextAndCalls(t *testing.T) {
	h, cfg := setup(t,
		func(t *testing.T, req wireRequest) reply {
			if !req.stream {
				t.Error("Stream did not use streamGenerateContent")
			}
			r := calls(fcall("memory_search", map[string]any{"query": "errors"}))
			r.parts = append([]wirePart{{Text: "Let me check memory."}}, r.parts...)
			r.parts[1].ThoughtSignature = "c2lnbmF0dXJl" // base64 "signature"
			return r
		},
		func(t *testing.T, req wireRequest) reply {
			model := req.Contents[1]
			if model.Role != "model" || len(model.Parts) != 2 || model.Parts[1].ThoughtSignature != "c2lnbmF0dXJl" {
				t.Errorf("the model turn was not sent back intact: %+v", model)
			}
			return text("Wrap errors with %w.")
		},
	)
	cfg.Stream = true
	s, _ := agent.NewSession(cfg)
	res, err := s.Turn(context.Background(), "errors?")
	if err != nil {
		t.Fatal(err)
	}
	var streamed []string
	for _, e := range h.events {
		if e.Type == agent.EventText {
			streamed = append(streamed, e.Text)
		}
	}
	if len(streamed) != 4 || strings.Join(streamed, "") != "Let me check memory.Wrap errors with %w." {
		t.Fatalf("text events %q", streamed)
	}
	if res.Text != "Wrap errors with %w." || res.Usage.InputTokens == 0 {
		t.Fatalf("result %+v", res)
	}
}

func TestRetriesRateLimitsAndServerErrors(t *testing.T) {
	fail := func(status int) script {
		return func(*testing.T, wireRequest) reply { return reply{status: status} }
	}
	h, cfg := setup(t, fail(429), fail(503), fail(500), func(*testing.T, wireRequest) reply { return text("ok") })
	s, _ := agent.NewSession(cfg)
	res, err := s.Turn(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "ok" || len(h.fake.seen()) != 4 {
		t.Fatalf("result %+v after %d requests", res, len(h.fake.seen()))
	}
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	h, cfg := setup(t, func(*testing.T, wireRequest) reply { return reply{status: 400} })
	s, _ := agent.NewSession(cfg)
	if _, err := s.Turn(context.Background(), "hi"); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("want a 400 error, got %v", err)
	}
	if n := len(h.fake.seen()); n != 1 {
		t.Fatalf("a 400 was sent %d times", n)
	}
}

func TestCancelKeepsWrittenMemories(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, cfg := setup(t,
		func(t *testing.T, req wireRequest) reply {
			return calls(fcall("memory_add", map[string]any{"content": "Releases are cut from the main branch on Fridays."}))
		},
		func(t *testing.T, req wireRequest) reply {
			cancel() // Ctrl-C while the model is thinking
			return reply{block: true}
		},
	)
	s, _ := agent.NewSession(cfg)
	_, err := s.Turn(ctx, "remember the release day")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	hits, serr := h.tk.Search(context.Background(), memory.Query{Text: "release branch Fridays"})
	if serr != nil {
		t.Fatal(serr)
	}
	if len(hits) == 0 || !strings.Contains(hits[0].Content, "Fridays") {
		t.Fatalf("the memory written before the cancel is gone: %+v", hits)
	}
	if last := h.events[len(h.events)-1]; last.Type != agent.EventError {
		t.Fatalf("last event %+v", last)
	}
}

func TestMissingKey(t *testing.T) {
	_, err := gemini.New(context.Background(), gemini.Config{})
	if !errors.Is(err, gemini.ErrNoAPIKey) || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Fatalf("got %v", err)
	}
}

func TestCountTokensUsesTheAPI(t *testing.T) {
	f := newFake(t)
	m, err := gemini.New(context.Background(), gemini.Config{APIKey: "k", BaseURL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	n, err := m.CountTokens(context.Background(), "one two three four")
	if err != nil || n != 4 {
		t.Fatalf("CountTokens = %d, %v", n, err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
