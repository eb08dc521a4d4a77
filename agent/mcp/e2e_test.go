package mcp_test

// End-to-end tests: the real acolyte binary, started the way Claude Code or
// Codex start it, in a real git repository, spoken to over stdio.

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

// acolyteBin is the binary under test, built once by TestMain.
var acolyteBin string

func TestMain(m *testing.M) {
	// No background fill outliving a test's temporary home.
	os.Setenv("ACOLYTE_BACKGROUND_FILL", "0")
	dir, err := os.MkdirTemp("", "acolyte-mcp-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	acolyteBin = filepath.Join(dir, "acolyte")
	build := exec.Command("go", "build", "-o", acolyteBin, "github.com/acolyte-dev/acolyte")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building acolyte:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is a repository with committed project memories and an acolyte
// home of its own.
type fixture struct {
	repo, home string
	// embedder is ACOLYTE_EMBEDDER, static unless a test chooses.
	embedder string
}

// committedMemory is in .acolyte/memories.jsonl from the first commit.
var committedMemory = memory.Memory{
	ID:      "01JB2Q3N5V8XK4M7R9T1W6Y0ZA",
	Scope:   memory.ScopeProject,
	Kind:    memory.KindStored,
	Content: "Integration tests need the postgres container: start it with docker compose up db",
	Topic:   "testing",
}

func newFixture(t testing.TB, mems ...memory.Memory) *fixture {
	t.Helper()
	f := &fixture{repo: t.TempDir(), home: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(f.repo, format.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	f.writeMemories(t, mems...)
	f.git(t, "init", "-q", "-b", "main")
	f.git(t, "add", ".")
	f.git(t, "commit", "-q", "-m", "project memories")
	return f
}

func (f *fixture) env() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + f.home,
		"ACOLYTE_HOME=" + filepath.Join(f.home, "acolyte"),
		"ACOLYTE_EMBEDDER=" + cmp.Or(f.embedder, "static"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
	}
}

func (f *fixture) git(t testing.TB, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = f.repo, f.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (f *fixture) memoriesPath() string { return format.MemoriesPath(f.repo) }

func (f *fixture) writeMemories(t testing.TB, mems ...memory.Memory) {
	t.Helper()
	if err := format.WriteFile(f.memoriesPath(), mems); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) readMemories(t testing.TB) []memory.Memory {
	t.Helper()
	mems, err := format.ReadFile(f.memoriesPath())
	if err != nil {
		t.Fatal(err)
	}
	// A project past format.SplitAt keeps its memories in shards.
	shards, err := filepath.Glob(filepath.Join(f.repo, format.Dir, format.ShardsDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range shards {
		more, err := format.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		mems = append(mems, more...)
	}
	return mems
}

// command is `acolyte mcp` as a client would start it: in the repository,
// with stderr kept for failure messages.
func (f *fixture) command(t testing.TB) *exec.Cmd {
	cmd := exec.Command(acolyteBin, "mcp")
	cmd.Dir, cmd.Env = f.repo, f.env()
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	t.Cleanup(func() {
		stderr.Close()
		if b, _ := os.ReadFile(stderr.Name()); t.Failed() && len(b) > 0 {
			t.Logf("acolyte mcp stderr:\n%s", b)
		}
	})
	return cmd
}

// connect starts the server and completes the MCP handshake through the SDK.
func (f *fixture) connect(t testing.TB) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: f.command(t)}, nil)
	if err != nil {
		t.Fatalf("connect to acolyte mcp: %v", err)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("closing the session: %v (the server should exit cleanly when stdin closes)", err)
		}
	})
	return cs
}

// callTool calls a tool and decodes its JSON text result into out. A protocol
// error fails the test: tool failures must come back as tool results.
func callTool(t testing.TB, cs *sdk.ClientSession, name string, args any, out any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: want one content item, got %d", name, len(res.Content))
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if res.IsError {
		var coded struct{ Error toolbox.Error }
		if err := json.Unmarshal([]byte(text), &coded); err != nil || coded.Error.Message == "" {
			t.Fatalf("%s: tool error is not the coded JSON form: %s", name, text)
		}
		if out != nil {
			*out.(*toolbox.Error) = coded.Error
		}
		return res
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			t.Fatalf("%s: result %s: %v", name, text, err)
		}
	}
	return res
}

func search(t testing.TB, cs *sdk.ClientSession, query string) toolbox.MemoryHits {
	t.Helper()
	var hits toolbox.MemoryHits
	if res := callTool(t, cs, "memory_search", map[string]any{"query": query}, &hits); res.IsError {
		t.Fatalf("search %q failed: %v", query, res.Content[0].(*sdk.TextContent).Text)
	}
	return hits
}

func hasID(hits toolbox.MemoryHits, id string) bool {
	return slices.ContainsFunc(hits.Memories, func(h toolbox.MemoryHit) bool { return h.ID == id })
}

func fileHasID(mems []memory.Memory, id string) bool {
	return slices.ContainsFunc(mems, func(m memory.Memory) bool { return m.ID == id })
}

func TestServesCommittedMemoriesAndWritesThroughToTheFile(t *testing.T) {
	f := newFixture(t, committedMemory)
	cs := f.connect(t)
	ctx := t.Context()

	init := cs.InitializeResult()
	if init.ServerInfo.Name != "acolyte" || !strings.Contains(init.Instructions, "memory_search") {
		t.Errorf("initialize: server %+v, instructions %q", init.ServerInfo, init.Instructions)
	}

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"memory_add", "memory_get", "memory_list", "memory_remove", "memory_search", "memory_update"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}

	// A fresh clone: nothing indexed yet, the committed memory must be found.
	hits := search(t, cs, "how do I run the integration tests")
	if !hasID(hits, committedMemory.ID) {
		t.Fatalf("search did not find the committed memory: %+v", hits)
	}

	var added toolbox.MemoryAdded
	callTool(t, cs, "memory_add", map[string]any{"content": "The API server listens on port 8443 in development", "topic": "dev"}, &added)
	if added.ID == "" || added.Scope != "project" {
		t.Fatalf("memory_add = %+v", added)
	}
	mems := f.readMemories(t)
	if !fileHasID(mems, added.ID) || !fileHasID(mems, committedMemory.ID) {
		t.Fatalf("after memory_add the file holds %+v", mems)
	}
	if !hasID(search(t, cs, "which port does the API server use"), added.ID) {
		t.Error("the added memory is not searchable")
	}

	var removed toolbox.MemoryRemoved
	callTool(t, cs, "memory_remove", map[string]any{"id": committedMemory.ID}, &removed)
	if len(removed.Removed) != 1 || removed.Removed[0].ID != committedMemory.ID {
		t.Fatalf("memory_remove = %+v", removed)
	}
	if mems := f.readMemories(t); fileHasID(mems, committedMemory.ID) || !fileHasID(mems, added.ID) {
		t.Fatalf("after memory_remove the file holds %+v", mems)
	}

	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "acolyte://status"})
	if err != nil {
		t.Fatal(err)
	}
	var status struct {
		Root   string
		Counts map[string]map[string]int
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &status); err != nil {
		t.Fatal(err)
	}
	if status.Counts["project"]["stored"] != 1 {
		t.Errorf("status = %s, want one stored project memory", res.Contents[0].Text)
	}
}

func TestBadCallsFailAloneAndTheServerCarriesOn(t *testing.T) {
	f := newFixture(t, committedMemory)
	cs := f.connect(t)

	for _, c := range []struct {
		tool string
		args any
		want string // in the error message
	}{
		{"memory_add", map[string]any{"content": 42}, "content"},
		{"memory_add", map[string]any{"content": "   "}, "empty"},
		{"memory_add", map[string]any{"content": "x", "scope": "galaxy"}, "galaxy"},
		{"memory_search", map[string]any{"qurey": "typo"}, "qurey"},
		{"memory_search", map[string]any{"query": "tests", "limit": -1}, "limit"},
		{"memory_remove", map[string]any{"id": "01JB2Q3N5V8XK4M7R9T1W6Y0ZZ"}, "01JB2Q3N5V8XK4M7R9T1W6Y0ZZ"},
		{"memory_list", map[string]any{"kind": "gossip"}, "gossip"},
	} {
		var e toolbox.Error
		res := callTool(t, cs, c.tool, c.args, &e)
		if !res.IsError {
			t.Errorf("%s %v: want a tool error", c.tool, c.args)
			continue
		}
		if !strings.Contains(e.Message, c.want) {
			t.Errorf("%s %v: error %q does not mention %q", c.tool, c.args, e.Message, c.want)
		}
	}
	if !hasID(search(t, cs, "integration tests postgres"), committedMemory.ID) {
		t.Error("search after bad calls lost the committed memory")
	}
	if mems := f.readMemories(t); len(mems) != 1 {
		t.Errorf("bad calls changed the file: %+v", mems)
	}
}

func TestPicksUpMemoriesChangedUnderneathIt(t *testing.T) {
	f := newFixture(t, committedMemory)
	cs := f.connect(t)
	search(t, cs, "anything") // index the committed file

	// Another terminal pulls a commit that adds a memory.
	pulled := memory.Memory{ID: "01JB2Q9N5V8XK4M7R9T1W6Y0ZB", Scope: memory.ScopeProject, Kind: memory.KindStored,
		Content: "Release builds are signed with the key in the vault under ci/signing"}
	f.writeMemories(t, committedMemory, pulled)
	f.git(t, "commit", "-q", "-am", "pulled memory")
	if !hasID(search(t, cs, "how are release builds signed"), pulled.ID) {
		t.Fatal("a memory that arrived in .acolyte/ is not searchable without a restart")
	}

	// A bad merge leaves a line unreadable: the valid lines are still
	// served (the server warns on stderr, naming the line), and nothing
	// else is held up.
	good, err := os.ReadFile(f.memoriesPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.memoriesPath(), append(good, "{\"id\": broken\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if !hasID(search(t, cs, "release signing"), pulled.ID) {
		t.Fatal("one malformed line must not take the valid memories out of search")
	}

	// Fixing the file is enough; the server was never down.
	if err := os.WriteFile(f.memoriesPath(), good, 0o644); err != nil {
		t.Fatal(err)
	}
	if !hasID(search(t, cs, "release signing key"), pulled.ID) {
		t.Fatal("search after fixing the file")
	}
}

// TestSpeaksPlainJSONRPC is a client in another language: newline-delimited
// JSON-RPC 2.0 on the process's stdin and stdout, no SDK.
func TestSpeaksPlainJSONRPC(t *testing.T) {
	f := newFixture(t, committedMemory)
	cmd := f.command(t)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	replies := make(chan map[string]json.RawMessage)
	go func() {
		defer close(replies)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || string(m["jsonrpc"]) != `"2.0"` {
				t.Errorf("stdout line is not a JSON-RPC 2.0 message: %q", sc.Text())
				continue
			}
			replies <- m
		}
	}()
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// request sends a request and decodes the result of the reply to it.
	request := func(id int, method, params string, result any) {
		t.Helper()
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
		select {
		case m, ok := <-replies:
			if !ok {
				t.Fatalf("%s: server closed stdout", method)
			}
			if string(m["id"]) != fmt.Sprint(id) || m["error"] != nil {
				t.Fatalf("%s: reply id %s, error %s", method, m["id"], m["error"])
			}
			if err := json.Unmarshal(m["result"], result); err != nil {
				t.Fatalf("%s: result %s: %v", method, m["result"], err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no reply", method)
		}
	}

	// Before initialize a request is refused with a JSON-RPC code, not 0.
	send(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
	select {
	case m := <-replies:
		var e struct{ Code int }
		if json.Unmarshal(m["error"], &e) != nil || e.Code != -32600 || string(m["id"]) != "0" {
			t.Fatalf("tools/list before initialize: id %s, error %s; want code -32600", m["id"], m["error"])
		}
	case <-time.After(30 * time.Second):
		t.Fatal("tools/list before initialize: no reply")
	}

	var init struct {
		ProtocolVersion string
		ServerInfo      struct{ Name string }
		Capabilities    struct{ Tools *struct{} }
		Instructions    string
	}
	request(1, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"plain","version":"0"}}`, &init)
	if init.ProtocolVersion != "2025-06-18" || init.ServerInfo.Name != "acolyte" || init.Capabilities.Tools == nil || init.Instructions == "" {
		t.Fatalf("initialize result = %+v", init)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	var tools struct {
		Tools []struct {
			Name        string
			InputSchema struct{ Type string }
		}
	}
	request(2, "tools/list", `{}`, &tools)
	if len(tools.Tools) != 6 {
		t.Fatalf("tools/list = %+v", tools)
	}
	for _, tool := range tools.Tools {
		if tool.InputSchema.Type != "object" {
			t.Errorf("%s input schema type = %q", tool.Name, tool.InputSchema.Type)
		}
	}

	type callResult struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	var found callResult
	request(3, "tools/call", `{"name":"memory_search","arguments":{"query":"postgres container for tests"}}`, &found)
	if found.IsError || len(found.Content) != 1 || found.Content[0].Type != "text" ||
		!strings.Contains(found.Content[0].Text, committedMemory.ID) {
		t.Fatalf("memory_search = %+v", found)
	}

	var bad callResult
	request(4, "tools/call", `{"name":"memory_remove","arguments":{}}`, &bad)
	if !bad.IsError || !strings.Contains(bad.Content[0].Text, "invalid_arguments") {
		t.Fatalf("memory_remove without an id = %+v", bad)
	}

	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after stdin closed the server exited with %v, want status 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("server still running 10s after stdin closed")
	}
}

// A question the project's memories do not answer comes back from the
// server as no hits and a note that says so, not as the least bad
// memories; a question they answer, asked in other words (fake for mock),
// still finds its memory.
func TestSearchSaysNoMemoryMatches(t *testing.T) {
	mock := memory.Memory{ID: "01JB2Q3N5V8XK4M7R9T1W6Y0ZB", Scope: memory.ScopeProject, Kind: memory.KindStored,
		Content: "Mock the payment gateway with the recorder in internal/testutil"}
	f := newFixture(t, committedMemory, mock)
	cs := f.connect(t)
	hits := search(t, cs, "what is the recipe for banana bread?")
	if len(hits.Memories) != 0 || !strings.HasPrefix(hits.Note, "no memory matches") {
		t.Fatalf("an unrelated question gave %+v; want no hits and a note starting %q", hits, "no memory matches")
	}
	hits = search(t, cs, "how do I fake the payment gateway?")
	if len(hits.Memories) == 0 || hits.Memories[0].ID != mock.ID || hits.Note != "" {
		t.Fatalf("a question the memories answer gave %+v; want %s first", hits, mock.ID)
	}
}

// TestStdioFollowsTheClientsRoots: a client started from a global config
// runs `acolyte mcp` in its own directory, outside the project, and names
// the project as a root; the server serves that repository, over the
// stdio transport's own framing, and user scope once the root is gone.
func TestStdioFollowsTheClientsRoots(t *testing.T) {
	f := newFixture(t, committedMemory)
	cmd := exec.Command(acolyteBin, "mcp")
	cmd.Dir, cmd.Env = t.TempDir(), f.env()
	client := sdk.NewClient(&sdk.Implementation{Name: "global-config", Version: "1"}, nil)
	//lint:ignore SA1019 the client's roots under test; deprecated only from MCP 2026-07-28, which acolyte does not serve
	client.AddRoots(&sdk.Root{URI: "file://" + filepath.ToSlash(f.repo), Name: "project"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if hits := search(t, cs, "postgres container for integration tests"); !hasID(hits, committedMemory.ID) {
		t.Fatalf("the server should serve the root's repository: %+v", hits)
	}
	var added toolbox.MemoryAdded
	callTool(t, cs, "memory_add", map[string]any{"content": "The API server listens on port 8080"}, &added)
	if added.Scope != "project" || !fileHasID(f.readMemories(t), added.ID) {
		t.Errorf("memory_add = %+v, want it in the root's .acolyte/memories.jsonl", added)
	}
	//lint:ignore SA1019 the client's roots under test; deprecated only from MCP 2026-07-28, which acolyte does not serve
	client.RemoveRoots("file://" + filepath.ToSlash(f.repo))
	//lint:ignore SA1019 the client's roots under test; deprecated only from MCP 2026-07-28, which acolyte does not serve
	client.AddRoots(&sdk.Root{URI: "file://" + filepath.ToSlash(t.TempDir()), Name: "scratch"})
	deadline := time.Now().Add(10 * time.Second)
	for {
		callTool(t, cs, "memory_add", map[string]any{"content": "The user likes terse commit messages"}, &added)
		if added.Scope == "user" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the roots moved outside any repository memory_add still stores in %s", added.Scope)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
