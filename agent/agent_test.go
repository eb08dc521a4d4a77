package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/internal/agenttest"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

func TestPromptStaysSmallAndInjectsNothing(t *testing.T) {
	tk, _ := agenttest.Open(t)
	root := t.TempDir()
	agentsMD := "# Conventions\n\n" + strings.Repeat("Use table-driven tests and wrap every error with context.\n", 40)
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte(agentsMD), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := toolbox.NewSandbox(root)
	if err != nil {
		t.Fatal(err)
	}
	agenttest.Add(t, tk, memory.ScopeProject, memory.KindStored, "The release script lives in scripts/release.sh.")
	agenttest.Add(t, tk, memory.ScopeProject, memory.KindRule, "Use table-driven tests.")

	rep, err := agent.Prompt(context.Background(), tk, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rep.System, "release.sh") || strings.Contains(rep.System, "table-driven") {
		t.Fatal("memory or AGENTS.md text reached the system prompt")
	}
	if !strings.Contains(rep.System, "I read the code or search memory before guessing") {
		t.Fatal("the soul lost its core line")
	}
	// 750 at 4 bytes a token leaves the providers' envelopes room within
	// the 800 of the first request on the wire (TestRunFirstRequestFitsIn800Tokens
	// in cmd measures that as the servers receive it).
	if rep.Tokens.Initial > 750 {
		t.Errorf("system prompt + initial tools = %d tokens (%s), budget 750", rep.Tokens.Initial, rep.Counter)
	}
	if rep.Tokens.ToolsDeferred >= rep.Tokens.ToolsFull || rep.Tokens.Initial >= rep.Tokens.Full {
		t.Errorf("deferring tools saved nothing: %+v", rep.Tokens)
	}
	var names []string
	for _, d := range rep.Tools {
		names = append(names, d.Name)
	}
	if got := strings.Join(names, ","); got != "memory_search,memory_add,read_file,list_files,search_code,load_tools,call_tool" {
		t.Errorf("initial tools %s", got)
	}
	if len(rep.BaselineFiles) != 1 || rep.BaselineMemories != 1 || rep.Tokens.Baseline != memory.EstimateTokens(agentsMD+"\n"+"- The release script lives in scripts/release.sh.\n") {
		t.Errorf("baseline: files %v, %d memories, %d tokens", rep.BaselineFiles, rep.BaselineMemories, rep.Tokens.Baseline)
	}
}

func TestLoadToolsShowsAndCallToolRuns(t *testing.T) {
	tk, _ := agenttest.Open(t)
	ws, err := toolbox.NewSandbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	core, deferred := agent.DefaultTools(tk, ws)
	ts, err := agent.NewToolset(core, deferred)
	if err != nil {
		t.Fatal(err)
	}
	load, _ := ts.Tool(agent.LoadToolsName)
	for _, name := range []string{"memory_remove", "edit_file", "write_file", "run_shell"} {
		if !strings.Contains(load.Description, " "+name+" (") {
			t.Errorf("load_tools does not list %s: %s", name, load.Description)
		}
	}
	before, _ := json.Marshal(ts.Declarations())
	res, err := load.Call(context.Background(), json.RawMessage(`{"names": ["run_shell", "nope"]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := res.(agent.ToolsLoaded)
	if len(got.Loaded) != 1 || got.Unknown[0] != "nope" || len(got.Tools) != 1 || got.Tools[0].Name != "run_shell" || !strings.Contains(string(got.Tools[0].Schema), `"command"`) {
		t.Fatalf("loaded %+v", got)
	}
	// The declarations stay byte-identical, so the provider's prompt
	// cache keeps the conversation; call_tool runs the loaded tool.
	if after, _ := json.Marshal(ts.Declarations()); string(after) != string(before) {
		t.Fatalf("load_tools changed the declarations:\n%s\n%s", before, after)
	}
	name, args, ok := ts.Unwrap(json.RawMessage(`{"name": "run_shell", "args": {"command": "true"}}`))
	if !ok || name != "run_shell" || string(args) != `{"command": "true"}` {
		t.Fatalf("unwrap: %q %s %v", name, args, ok)
	}
	for _, bad := range []string{`{"name": "nope", "args": {}}`, `{"name": "call_tool", "args": {}}`, `[1]`} {
		if _, _, ok := ts.Unwrap(json.RawMessage(bad)); ok {
			t.Errorf("unwrap accepted %s", bad)
		}
	}
	callTool, _ := ts.Tool(agent.CallToolName)
	if _, err := callTool.Call(context.Background(), json.RawMessage(`{"name": "nope"}`)); err == nil || !strings.Contains(err.Error(), "run_shell") {
		t.Fatalf("call_tool of an unknown tool: %v", err)
	}
	if _, err := load.Call(context.Background(), json.RawMessage(`{"names": ["nope"]}`)); err == nil {
		t.Fatal("loading only unknown tools succeeded")
	}
	if _, err := agent.NewToolset(core, core[:1]); err == nil {
		t.Fatal("a tool defined twice was accepted")
	}
}

func TestWordSimilarityRule(t *testing.T) {
	cases := []struct {
		a, b string
		dup  bool
	}{
		{"Run tests with go test ./...", "run tests with  GO TEST ./...", true},
		{"Always wrap errors with %w and never panic in library code.", "Always wrap errors with %w, and never panic in the library code.", true},
		{"The API listens on port 8080.", "The API listens on port 9090.", false},
		{"Use make build to compile.", "Use make test to run the tests.", false},
	}
	for _, c := range cases {
		sim := agent.WordSimilarity(c.a, c.b)
		if (sim >= agent.NearDuplicateSimilarity) != c.dup {
			t.Errorf("%q vs %q: similarity %.2f, want duplicate=%v", c.a, c.b, sim, c.dup)
		}
	}
}

func TestTranscriptKeepsTaskAndLatestSteps(t *testing.T) {
	var h []agent.Message
	h = append(h, agent.Message{Role: agent.RoleUser, Parts: []agent.Part{{Text: "THE TASK"}}})
	for i := 0; i < 50; i++ {
		h = append(h, agent.Message{Role: agent.RoleModel, Parts: []agent.Part{{Text: strings.Repeat("step ", 40)}}})
	}
	h = append(h, agent.Message{Role: agent.RoleModel, Parts: []agent.Part{{Text: "LAST WORDS"}}})
	tr := agent.Transcript(h, 2000)
	if len(tr) > 2000 || !strings.HasPrefix(tr, "[user] THE TASK") || !strings.HasSuffix(tr, "LAST WORDS") {
		t.Fatalf("transcript (%d bytes): %.80s … %s", len(tr), tr, tr[max(0, len(tr)-40):])
	}
}

func TestToolArgumentErrorsSpeakJSONNotGo(t *testing.T) {
	tk, _ := agenttest.Open(t)
	ws, err := toolbox.NewSandbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	core, deferred := agent.DefaultTools(tk, ws)
	ts, err := agent.NewToolset(core, deferred)
	if err != nil {
		t.Fatal(err)
	}
	read, _ := ts.Tool("read_file")
	cases := map[string]string{
		`{"path": 42}`:               `field "path" must be a string, not a JSON number`,
		`{"path": "a", "colour": 1}`: `unknown field "colour"`,
		`["a"]`:                      `must be a JSON object, not a JSON array`,
	}
	for args, want := range cases {
		_, err := read.Call(context.Background(), json.RawMessage(args))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go value") || strings.Contains(err.Error(), "struct")) {
			t.Errorf("%s: Go type names leak: %v", args, err)
		}
	}
}

func TestSessionsPruneOnlyStaleSessions(t *testing.T) {
	_, store := agenttest.Open(t)
	ctx := context.Background()
	now := time.Now()
	ss := agent.Sessions{Store: store}
	for _, s := range []struct {
		id  string
		age time.Duration
	}{{"session-old", 10 * 24 * time.Hour}, {"session-recent", time.Hour}, {"session-current", 30 * 24 * time.Hour}} {
		tk := memory.Scoped{Store: store, Visibility: memory.Visibility{SessionKey: s.id}}
		agenttest.Add(t, tk, memory.ScopeSession, memory.KindObservation, "A fact of "+s.id+".")
		if err := ss.Touch(ctx, s.id, now.Add(-s.age)); err != nil {
			t.Fatal(err)
		}
	}
	pruned, err := ss.Prune(ctx, agent.DefaultSessionMaxAge, "session-current", now)
	if err != nil || len(pruned) != 1 || pruned[0] != "session-old" {
		t.Fatalf("pruned %v, %v", pruned, err)
	}
	for id, want := range map[string]int{"session-old": 0, "session-recent": 1, "session-current": 1} {
		got, err := store.List(ctx, memory.Visibility{SessionKey: id}, memory.Filter{Scope: memory.ScopeSession})
		if err != nil || len(got) != want {
			t.Errorf("%s: %d memories left (%v), want %d", id, len(got), err, want)
		}
	}
	if last, _ := store.GetState(ctx, agent.LastSessionKey); last != "session-current" {
		t.Errorf("last session %q", last)
	}
}
