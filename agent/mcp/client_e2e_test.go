package mcp_test

// End-to-end tests through the official Go SDK's client, against the real
// binary: what issue reports found with real clients (batches, paging,
// schema limits, error codes), checked the way a client meets them.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acolyte-dev/acolyte/agent/mcp"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

// tappedSession is an SDK client session over `acolyte mcp` with a tap on
// its pipes: the test can write lines the SDK never would (a batch, a 16 MiB
// line, invalid UTF-8), and the replies to them (id null or "raw-…") come to
// the test instead of the SDK.
type tappedSession struct {
	cs     *sdk.ClientSession
	stdin  *lockedWriter
	tapped chan string
	exited chan error
}

// lockedWriter keeps the SDK's lines and the test's whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

func (f *fixture) tap(t testing.TB) *tappedSession {
	t.Helper()
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
	ts := &tappedSession{stdin: &lockedWriter{w: stdin}, tapped: make(chan string, 4), exited: make(chan error, 1)}
	toSDK, fromServer := io.Pipe()
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 2*mcp.MaxLineBytes)
		for sc.Scan() {
			var m struct{ ID json.RawMessage }
			_ = json.Unmarshal(sc.Bytes(), &m)
			if string(m.ID) == "null" || strings.HasPrefix(string(m.ID), `"raw-`) {
				ts.tapped <- sc.Text()
				continue
			}
			if _, err := fromServer.Write(append(sc.Bytes(), '\n')); err != nil {
				return
			}
		}
		fromServer.Close()
		ts.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e-tap", Version: "1"}, nil)
	ts.cs, err = client.Connect(ctx, &sdk.IOTransport{Reader: toSDK, Writer: ts.stdin}, nil)
	if err != nil {
		t.Fatalf("connect to acolyte mcp: %v", err)
	}
	return ts
}

// raw writes a line the SDK would not, and returns the reply to it.
func (ts *tappedSession) raw(t testing.TB, line string) (reply string) {
	t.Helper()
	if _, err := io.WriteString(ts.stdin, line+"\n"); err != nil {
		t.Fatalf("writing a raw line: %v", err)
	}
	select {
	case reply = <-ts.tapped:
		return reply
	case err := <-ts.exited:
		t.Fatalf("acolyte mcp exited (%v) after a raw line of %d bytes: %.200s", err, len(line), line)
	case <-time.After(time.Minute): // a 16 MiB line takes seconds on a loaded machine
		t.Fatalf("no reply to a raw line of %d bytes within a minute", len(line))
	}
	return ""
}

// close ends the session as a client does and wants the server to exit 0:
// nothing before killed it.
func (ts *tappedSession) close(t testing.TB) {
	t.Helper()
	if err := ts.cs.Close(); err != nil {
		t.Errorf("closing the session: %v", err)
	}
	select {
	case err := <-ts.exited:
		if err != nil {
			t.Errorf("acolyte mcp exited with %v, want status 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("acolyte mcp still running 30s after the client closed stdin")
	}
}

func rpcErrorOf(t testing.TB, reply string) (id string, code int, message string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage
		Error *struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal([]byte(reply), &m); err != nil || m.Error == nil {
		t.Fatalf("want a JSON-RPC error, got %.300s", reply)
	}
	return string(m.ID), m.Error.Code, m.Error.Message
}

func TestRealClientSessionSurvivesBatchesLongLinesAndBadText(t *testing.T) {
	f := newFixture(t, committedMemory)
	ts := f.tap(t)
	if v := ts.cs.InitializeResult().ProtocolVersion; v < "2025-06-18" {
		t.Fatalf("the SDK client negotiated %s; this test is about 2025-06-18 and later", v)
	}

	id, code, msg := rpcErrorOf(t, ts.raw(t, `[{"jsonrpc":"2.0","id":"raw-1","method":"tools/list"},{"jsonrpc":"2.0","id":"raw-2","method":"ping"}]`))
	if id != "null" || code != -32600 || !strings.Contains(msg, "batch") {
		t.Errorf("batch: id %s, code %d, %q; want -32600 saying batches are not supported", id, code, msg)
	}
	if !hasID(search(t, ts.cs, "integration tests postgres"), committedMemory.ID) {
		t.Error("search after the batch")
	}

	huge := `{"jsonrpc":"2.0","id":"raw-huge","method":"tools/call","params":{"name":"memory_add","arguments":{"content":"` +
		strings.Repeat("x", mcp.MaxLineBytes) + `"}}}`
	id, code, msg = rpcErrorOf(t, ts.raw(t, huge))
	if id != `"raw-huge"` || code != -32600 || !strings.Contains(msg, "bytes") {
		t.Errorf("a line over %d bytes: id %s, code %d, %q", mcp.MaxLineBytes, id, code, msg)
	}

	// Invalid UTF-8 reaches the tool as sent and is refused, naming the field.
	reply := ts.raw(t, "{\"jsonrpc\":\"2.0\",\"id\":\"raw-utf8\",\"method\":\"tools/call\",\"params\":{\"name\":\"memory_add\","+
		"\"arguments\":{\"content\":\"caf\xe9 au lait is served at standup\"}}}")
	var res struct {
		Result struct {
			IsError bool
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal([]byte(reply), &res); err != nil || !res.Result.IsError || len(res.Result.Content) != 1 ||
		!strings.Contains(res.Result.Content[0].Text, `"invalid_arguments"`) || !strings.Contains(res.Result.Content[0].Text, "content: is not valid UTF-8") {
		t.Errorf("memory_add of invalid UTF-8: %s", reply)
	}
	if mems := f.readMemories(t); len(mems) != 1 {
		t.Errorf("refused calls changed the file: %+v", mems)
	}

	var added toolbox.MemoryAdded
	if res := callTool(t, ts.cs, "memory_add", map[string]any{"content": "Standup is at 9:30 in the small room"}, &added); res.IsError || added.ID == "" {
		t.Fatalf("memory_add after the raw lines: %+v", added)
	}
	ts.close(t)
}

// TestRealClientPagesThroughEveryMemory: with 1,150 memories, every one is
// reachable through memory_list, each once, also when memories are removed
// between pages.
func TestRealClientPagesThroughEveryMemory(t *testing.T) {
	f := newFixture(t, committedMemory)
	store := openStore(t, filepath.Join(f.home, "acolyte", "acolyte.db"))
	synthetic := syntheticMemories(t, store, 1150)
	if _, err := store.ReplaceScope(context.Background(), memory.ScopeUser, "", synthetic); err != nil {
		t.Fatal(err)
	}
	store.Close()
	cs := f.connect(t)
	outputs := outputSchemas(t, cs)

	list := func(args map[string]any) toolbox.MemoryHits {
		t.Helper()
		var page toolbox.MemoryHits
		res := callTool(t, cs, "memory_list", args, &page)
		if res.IsError {
			t.Fatalf("memory_list %v: %s", args, res.Content[0].(*sdk.TextContent).Text)
		}
		checkOutput(t, outputs, "memory_list", res)
		return page
	}

	seen := make(map[string]int)
	var order []string
	args := map[string]any{"scope": "user", "limit": 200}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("memory_list never stopped giving a nextCursor")
		}
		page := list(args)
		if len(page.Memories) > 200 || (page.NextCursor != "" && len(page.Memories) != 200) {
			t.Fatalf("page %d holds %d memories, nextCursor %q", pages, len(page.Memories), page.NextCursor)
		}
		for _, m := range page.Memories {
			seen[m.ID]++
			order = append(order, m.ID)
		}
		if page.NextCursor == "" {
			break
		}
		args["cursor"] = page.NextCursor
	}
	if len(order) != len(synthetic) {
		t.Fatalf("paging listed %d memories, want all %d", len(order), len(synthetic))
	}
	for _, m := range synthetic {
		if seen[m.ID] != 1 {
			t.Fatalf("memory %s (%q) listed %d times, want once", m.ID, m.Content, seen[m.ID])
		}
	}

	// Remove memories on the page just read and on the one before: the next
	// page starts where this one ended, skipping and repeating nothing.
	first := list(map[string]any{"scope": "user", "limit": 100})
	second := list(map[string]any{"scope": "user", "limit": 100, "cursor": first.NextCursor})
	for _, id := range []string{first.Memories[3].ID, second.Memories[99].ID, second.Memories[50].ID} {
		callTool(t, cs, "memory_remove", map[string]any{"id": id}, nil)
	}
	third := list(map[string]any{"scope": "user", "limit": 100, "cursor": second.NextCursor})
	if len(third.Memories) != 100 || third.Memories[0].ID != order[200] {
		t.Fatalf("after removals the next page starts at %s, want %s", third.Memories[0].ID, order[200])
	}

	// A cursor belongs to its filters, as MCP's cursors belong to their list.
	var e toolbox.Error
	res := callTool(t, cs, "memory_list", map[string]any{"scope": "project", "cursor": second.NextCursor}, &e)
	if !res.IsError || e.Code != toolbox.CodeInvalidArgs || !strings.HasPrefix(e.Message, "cursor:") {
		t.Errorf("a cursor with other filters: %+v", e)
	}
}

// TestRealClientSeesTheLimitsAndErrorCodes: the schemas a client lists
// declare the limits, calls outside them fail as invalid_arguments naming the
// field, a secret has its own code, and results match their output schemas.
func TestRealClientSeesTheLimitsAndErrorCodes(t *testing.T) {
	f := newFixture(t, committedMemory)
	cs := f.connect(t)
	outputs := outputSchemas(t, cs)

	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		var in struct {
			Properties map[string]struct {
				Description string
				Minimum     *float64
				Maximum     *float64
				MaxLength   *int
			}
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatal(err)
		}
		for name, p := range in.Properties {
			if p.Description == "" {
				t.Errorf("%s.%s has no description", tool.Name, name)
			}
			if name == "limit" && (p.Minimum == nil || *p.Minimum != 1 || p.Maximum == nil) {
				t.Errorf("%s.limit declares no minimum 1 and maximum", tool.Name)
			}
			if (name == "content" || name == "query" || name == "topic") && p.MaxLength == nil {
				t.Errorf("%s.%s declares no maxLength", tool.Name, name)
			}
		}
	}

	secret := "AKIAIOSFODNN7EXAMPLF"
	for _, c := range []struct {
		tool  string
		args  map[string]any
		code  string
		start string // of the message
	}{
		{"memory_search", map[string]any{"query": "tests", "limit": 51}, toolbox.CodeInvalidArgs, "limit: must be between 1 and 50"},
		{"memory_list", map[string]any{"limit": 500}, toolbox.CodeInvalidArgs, "limit: must be between 1 and 200"},
		{"memory_add", map[string]any{"content": "Deploys go through the release train", "topic": strings.Repeat("t", 5000)},
			toolbox.CodeInvalidArgs, "topic: 5000 bytes, the limit is 64"},
		{"memory_search", map[string]any{"query": strings.Repeat("q", 8<<10+1)}, toolbox.CodeInvalidArgs, "query: 8193 bytes, the limit is 8192"},
		{"memory_search", map[string]any{"queries": slices.Repeat([]string{"q"}, 11)}, toolbox.CodeInvalidArgs, "queries: 11 queries"},
		{"memory_add", map[string]any{"content": "S3 uploads use " + secret + " in CI"}, toolbox.CodeSecret,
			"refusing to store what looks like a secret in project memory: it contains an AWS access key id"},
		{"memory_add", map[string]any{"content": "S3 uploads go through CI", "topic": secret}, toolbox.CodeSecret,
			"refusing to store what looks like a secret in project memory: it contains an AWS access key id in its topic"},
		{"memory_add", map[string]any{"content": "S3 uploads use " + secret + " in CI", "scope": "user"}, toolbox.CodeSecret,
			"refusing to store what looks like a secret in user memory: it contains an AWS access key id"},
	} {
		var e toolbox.Error
		res := callTool(t, cs, c.tool, c.args, &e)
		if !res.IsError || e.Code != c.code || !strings.HasPrefix(e.Message, c.start) {
			t.Errorf("%s %.80v: got %s %q, want %s starting %q", c.tool, c.args, e.Code, e.Message, c.code, c.start)
		}
		if strings.Contains(e.Message, secret) || strings.Contains(e.Message, "store one fact") && c.tool == "memory_search" {
			t.Errorf("%s: message %q echoes the secret or talks about storing", c.tool, e.Message)
		}
	}
	if mems := f.readMemories(t); len(mems) != 1 {
		t.Errorf("refused calls changed the file: %+v", mems)
	}

	// Session scope says why it is empty: this server has no session id.
	var hits toolbox.MemoryHits
	checkOutput(t, outputs, "memory_search", callTool(t, cs, "memory_search", map[string]any{"query": "anything", "scope": "session"}, &hits))
	if len(hits.Memories) != 0 || !strings.Contains(hits.Note, "ACOLYTE_SESSION") {
		t.Errorf("session search without a session: %+v", hits)
	}

	// What succeeds matches the output schema the client was given.
	var added toolbox.MemoryAdded
	checkOutput(t, outputs, "memory_add", callTool(t, cs, "memory_add", map[string]any{"content": "Lint with go vet", "topic": strings.Repeat("t", 64)}, &added))
	checkOutput(t, outputs, "memory_search", callTool(t, cs, "memory_search", map[string]any{"queries": slices.Repeat([]string{"lint"}, 10), "limit": 50}, nil))
	checkOutput(t, outputs, "memory_remove", callTool(t, cs, "memory_remove", map[string]any{"id": added.ID}, nil))
}

// outputSchemas resolves the output schema of every tool the server lists.
func outputSchemas(t testing.TB, cs *sdk.ClientSession) map[string]*jsonschema.Resolved {
	t.Helper()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]*jsonschema.Resolved)
	for _, tool := range tools.Tools {
		if tool.OutputSchema == nil {
			t.Errorf("%s declares no outputSchema, yet returns structured content", tool.Name)
			continue
		}
		b, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s outputSchema: %v", tool.Name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s outputSchema does not resolve: %v", tool.Name, err)
		}
		out[tool.Name] = r
	}
	return out
}

// checkOutput validates a successful result's structured content against
// the tool's output schema, as a strict client does.
func checkOutput(t testing.TB, schemas map[string]*jsonschema.Resolved, name string, res *sdk.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s failed: %s", name, res.Content[0].(*sdk.TextContent).Text)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		t.Fatalf("%s returned no structured content", name)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := schemas[name].Validate(v); err != nil {
		t.Errorf("%s structured content does not match its outputSchema: %v\n%s", name, err, fmt.Sprintf("%.500s", b))
	}
}
