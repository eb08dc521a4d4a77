package mcp_test

// End-to-end tests of `acolyte mcp --http`: the real binary, spoken to by
// the official Go SDK's Streamable HTTP client and by plain HTTP requests,
// as a remote IDE or a hosted agent would.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

// httpServer is `acolyte mcp --http 127.0.0.1:0` started in dir.
type httpServer struct {
	url   string // http://127.0.0.1:PORT/mcp
	token string
}

// serveHTTP starts the server with env (the fixture's, plus extra) and reads
// the address and token it prints.
func serveHTTP(t *testing.T, f *fixture, dir string, extra []string, args ...string) httpServer {
	t.Helper()
	cmd := exec.Command(acolyteBin, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Dir, cmd.Env = dir, append(f.env(), extra...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("acolyte mcp --http did not stop cleanly on ^C: %v", err)
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("acolyte mcp --http still running 15s after ^C")
		}
	})
	var s httpServer
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(30 * time.Second)
	for s.url == "" || s.token == "" && !slices.Contains(args, "--no-token") && !hasEnv(extra, "ACOLYTE_MCP_TOKEN") {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("acolyte mcp --http exited before serving")
			}
			if _, u, ok := strings.Cut(line, " at "); ok && strings.HasPrefix(u, "http://") {
				s.url = u
			}
			if _, tok, ok := strings.Cut(line, "Authorization: Bearer "); ok {
				s.token = tok
			}
		case <-timeout:
			t.Fatalf("acolyte mcp --http printed no address within 30s")
		}
	}
	go func() {
		for range lines { // keep stderr drained
		}
	}()
	return s
}

func hasEnv(env []string, name string) bool {
	return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
}

// bearer adds the token to every request of the SDK's client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connectHTTP connects an SDK client announcing roots (file:// URIs of
// dirs) and returns its session and client, to change the roots later.
func connectHTTP(t *testing.T, s httpServer, dirs ...string) (*sdk.ClientSession, *sdk.Client) {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "http-e2e", Version: "1"}, nil)
	for _, d := range dirs {
		//lint:ignore SA1019 the client's roots under test; deprecated only from MCP 2026-07-28, which acolyte does not serve
		client.AddRoots(&sdk.Root{URI: fileURI(d), Name: filepath.Base(d)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.url,
		HTTPClient: &http.Client{Transport: bearer{s.token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatalf("connect over HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, client
}

func fileURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// post sends one initialize request by hand, with the headers given.
func post(t *testing.T, s httpServer, header map[string]string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	return res.StatusCode, string(b)
}

// TestHTTPRefusesWithoutTheTokenAndFromOtherOrigins attacks the endpoint as
// a web page and as a local program without the token would.
func TestHTTPRefusesWithoutTheTokenAndFromOtherOrigins(t *testing.T) {
	f := newFixture(t, committedMemory)
	s := serveHTTP(t, f, f.repo, nil)
	if len(s.token) < 40 {
		t.Fatalf("printed token %q is too short to be a secret", s.token)
	}
	host := strings.TrimPrefix(strings.TrimSuffix(s.url, "/mcp"), "http://")
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer " + strings.Repeat("A", len(s.token))}, http.StatusUnauthorized},
		{"token without Bearer", map[string]string{"Authorization": s.token}, http.StatusUnauthorized},
		{"another site's page, with the token", map[string]string{"Authorization": "Bearer " + s.token,
			"Origin": "https://evil.example.com"}, http.StatusForbidden},
		{"DNS rebinding: evil Host and Origin", map[string]string{"Authorization": "Bearer " + s.token,
			"Origin": "http://evil.example.com", "Host": "evil.example.com"}, http.StatusForbidden},
		{"rebinding with a loopback Origin forged", map[string]string{"Authorization": "Bearer " + s.token,
			"Origin": "http://" + host, "Host": "evil.example.com"}, http.StatusForbidden},
		{"null origin (a sandboxed page)", map[string]string{"Authorization": "Bearer " + s.token, "Origin": "null"}, http.StatusForbidden},
		{"a local page", map[string]string{"Authorization": "Bearer " + s.token, "Origin": "http://" + host}, http.StatusOK},
		{"a program", map[string]string{"Authorization": "Bearer " + s.token}, http.StatusOK},
	} {
		code, body := post(t, s, tc.header)
		if code != tc.want {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, code, tc.want, body)
		}
		if code != http.StatusOK && strings.Contains(body, committedMemory.Content) {
			t.Errorf("%s: a refused request was answered with memory: %s", tc.name, body)
		}
	}

	// The token may come from the environment, so a client's config keeps it.
	s2 := serveHTTP(t, f, f.repo, []string{"ACOLYTE_MCP_TOKEN=chosen-token-0123456789"})
	s2.token = "chosen-token-0123456789"
	if code, body := post(t, s2, map[string]string{"Authorization": "Bearer chosen-token-0123456789"}); code != http.StatusOK {
		t.Errorf("the token from ACOLYTE_MCP_TOKEN was refused: %d %s", code, body)
	}
	cs, _ := connectHTTP(t, s2, f.repo)
	if hits := search(t, cs, "how do I start the postgres container"); !hasID(hits, committedMemory.ID) {
		t.Errorf("search over HTTP = %+v", hits)
	}
}

// TestHTTPNoTokenOnlyOnLoopback: serving without a token beyond this
// machine is refused before anything listens.
func TestHTTPNoTokenOnlyOnLoopback(t *testing.T) {
	f := newFixture(t)
	cmd := exec.Command(acolyteBin, "mcp", "--http", "0.0.0.0:0", "--no-token")
	cmd.Dir, cmd.Env = f.repo, f.env()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !asExit(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "only a loopback address") {
		t.Fatalf("--no-token on 0.0.0.0: %v\n%s", err, out)
	}
}

func asExit(err error, exit **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*exit = e
	return ok
}

// TestHTTPSessionsFollowTheirRoots: one server, started outside any
// repository, serves each session the repository its client names, follows
// roots/list_changed, and outside any repository stores in user scope.
func TestHTTPSessionsFollowTheirRoots(t *testing.T) {
	a := newFixture(t, committedMemory)
	b := newFixture(t, memory.Memory{ID: "01JB2Q3N5V8XK4M7R9T1W6Y0ZB", Scope: memory.ScopeProject, Kind: memory.KindStored,
		Content: "Releases are cut from the release branch by make release", Topic: "release"})
	b.home = a.home // one user, one acolyte home, two repositories
	outside := t.TempDir()
	s := serveHTTP(t, a, outside, nil)

	csA, _ := connectHTTP(t, s, filepath.Join(a.repo, ".acolyte")) // a directory inside the repository
	csB, clientB := connectHTTP(t, s, outside, b.repo)             // the first root in a repository wins

	if hits := search(t, csA, "postgres container for integration tests"); !hasID(hits, committedMemory.ID) {
		t.Errorf("session A should see repository A's memory: %+v", hits)
	}
	if hits := search(t, csB, "how are releases cut"); !hasID(hits, "01JB2Q3N5V8XK4M7R9T1W6Y0ZB") {
		t.Errorf("session B should see repository B's memory: %+v", hits)
	}
	if hits := search(t, csB, "postgres container for integration tests"); hasID(hits, committedMemory.ID) {
		t.Errorf("session B sees repository A's project memory: %+v", hits)
	}
	var added toolbox.MemoryAdded
	callTool(t, csB, "memory_add", map[string]any{"content": "Release notes are written in docs/releases"}, &added)
	if added.Scope != "project" || !fileHasID(b.readMemories(t), added.ID) || fileHasID(a.readMemories(t), added.ID) {
		t.Errorf("memory_add in session B went to %+v, want repository B's file", added)
	}

	// The client leaves repository B: the session follows it outside.
	//lint:ignore SA1019 the client's roots under test; deprecated only from MCP 2026-07-28, which acolyte does not serve
	clientB.RemoveRoots(fileURI(b.repo))
	deadline := time.Now().Add(10 * time.Second)
	for {
		tools, err := csB.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if scopeDefault(t, tools, "memory_add") == "user" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after roots/list_changed to a directory outside any repository, memory_add's schema still defaults to %q",
				scopeDefault(t, tools, "memory_add"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	callTool(t, csB, "memory_add", map[string]any{"content": "The user reads diffs side by side"}, &added)
	if added.Scope != "user" {
		t.Errorf("memory_add outside any repository went to %q, want user", added.Scope)
	}
	var coded toolbox.Error
	if res := callTool(t, csB, "memory_add", map[string]any{"content": "x marks the spot", "scope": "project"}, &coded); !res.IsError ||
		coded.Code != toolbox.CodeInvalidArgs {
		t.Errorf("memory_add scope project outside a repository = %+v, want invalid_arguments", coded)
	}
	// The user memory is the same user's in repository A.
	if hits := search(t, csA, "how does the user read diffs"); len(hits.Memories) == 0 || hits.Memories[0].Scope != "user" {
		t.Errorf("session A should find the user memory added outside: %+v", hits)
	}
	// Session A kept its repository all along.
	if tools, err := csA.ListTools(t.Context(), nil); err != nil || scopeDefault(t, tools, "memory_add") != "project" {
		t.Errorf("session A's memory_add defaults to %q, want project (err %v)", scopeDefault(t, tools, "memory_add"), err)
	}
}

// scopeDefault is the default scope a tool's schema declares.
func scopeDefault(t *testing.T, tools *sdk.ListToolsResult, name string) string {
	t.Helper()
	for _, tool := range tools.Tools {
		if tool.Name != name {
			continue
		}
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Properties map[string]struct {
				Default     string   `json:"default"`
				Enum        []string `json:"enum"`
				Description string   `json:"description"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		scope := s.Properties["scope"]
		if !strings.Contains(scope.Description, scope.Default+" (default") {
			t.Errorf("%s: scope description %q does not say the default %q", name, scope.Description, scope.Default)
		}
		return scope.Default
	}
	t.Fatalf("no tool %s", name)
	return ""
}

// TestHTTPToolsGetUpdateRemoveAndNearMemories drives the tools a model
// uses to keep memory consistent, over HTTP: memory_add shows the memory a
// new fact contradicts, memory_update corrects it in place (and refuses a
// rule, naming its file), memory_get reads several, memory_remove takes
// several at once or none.
func TestHTTPToolsGetUpdateRemoveAndNearMemories(t *testing.T) {
	f := newFixture(t, committedMemory)
	if err := os.WriteFile(filepath.Join(f.repo, "AGENTS.md"), []byte("# Rules\n\n## Testing\n- Run go test ./... before every push\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sync := exec.Command(acolyteBin, "sync")
	sync.Dir, sync.Env = f.repo, f.env()
	if out, err := sync.CombinedOutput(); err != nil {
		t.Fatalf("acolyte sync: %v\n%s", err, out)
	}
	s := serveHTTP(t, f, f.repo, nil)
	cs, _ := connectHTTP(t, s, f.repo)
	outputs := outputSchemas(t, cs)

	// A contradicting fact: the old one comes back as similar.
	var added toolbox.MemoryAdded
	res := callTool(t, cs, "memory_add", map[string]any{"content": "Integration tests no longer need the postgres container: they start PGlite themselves"}, &added)
	checkOutput(t, outputs, "memory_add", res)
	if !slices.ContainsFunc(added.Similar, func(h toolbox.MemoryHit) bool { return h.ID == committedMemory.ID }) || added.Note == "" {
		t.Fatalf("memory_add should return the memory it contradicts, with a note: %+v", added)
	}

	// Update the old one instead of keeping both.
	var updated toolbox.MemoryUpdated
	res = callTool(t, cs, "memory_update", map[string]any{"id": committedMemory.ID,
		"content": "Integration tests start PGlite themselves; no postgres container is needed", "topic": "testing / integration"}, &updated)
	checkOutput(t, outputs, "memory_update", res)
	if res.IsError || updated.Memory.ID != committedMemory.ID || updated.Memory.Topic != "testing / integration" {
		t.Fatalf("memory_update = %+v", updated)
	}
	for _, m := range f.readMemories(t) {
		if m.ID == committedMemory.ID && !strings.Contains(m.Content, "PGlite") {
			t.Errorf("the update did not reach .acolyte/memories.jsonl: %q", m.Content)
		}
	}

	// A rule is refused, with the file to edit.
	var rules toolbox.MemoryHits
	callTool(t, cs, "memory_list", map[string]any{"kind": "rule"}, &rules)
	if len(rules.Memories) != 1 {
		t.Fatalf("want the one rule from AGENTS.md, got %+v", rules)
	}
	rule := rules.Memories[0]
	var coded toolbox.Error
	if res := callTool(t, cs, "memory_update", map[string]any{"id": rule.ID, "content": "Never run tests"}, &coded); !res.IsError ||
		coded.Code != toolbox.CodeDerived || !strings.Contains(coded.Message, "AGENTS.md") {
		t.Errorf("memory_update of a rule = %+v, want %s naming AGENTS.md", coded, toolbox.CodeDerived)
	}
	if res := callTool(t, cs, "memory_remove", map[string]any{"ids": []string{added.ID, rule.ID}}, &coded); !res.IsError ||
		coded.Code != toolbox.CodeDerived || !strings.Contains(coded.Message, "AGENTS.md") {
		t.Errorf("memory_remove of a rule = %+v, want %s naming AGENTS.md", coded, toolbox.CodeDerived)
	}
	if res := callTool(t, cs, "memory_update", map[string]any{"id": "01JB2Q3N5V8XK4M7R9T1W6Y0ZZ", "content": "x"}, &coded); !res.IsError || coded.Code != toolbox.CodeNotFound {
		t.Errorf("memory_update of an unknown id = %+v, want not_found", coded)
	}

	// memory_get reads several, saying which it did not find.
	var got toolbox.MemoryGot
	res = callTool(t, cs, "memory_get", map[string]any{"ids": []string{committedMemory.ID, "01JB2Q3N5V8XK4M7R9T1W6Y0ZZ", added.ID}}, &got)
	checkOutput(t, outputs, "memory_get", res)
	if len(got.Memories) != 2 || got.Memories[0].ID != committedMemory.ID || got.Memories[1].ID != added.ID ||
		!slices.Equal(got.Missing, []string{"01JB2Q3N5V8XK4M7R9T1W6Y0ZZ"}) || !strings.Contains(got.Memories[0].Content, "PGlite") {
		t.Errorf("memory_get = %+v", got)
	}

	// memory_remove: one unknown id and nothing goes; then both go at once.
	if res := callTool(t, cs, "memory_remove", map[string]any{"ids": []string{added.ID, "01JB2Q3N5V8XK4M7R9T1W6Y0ZZ"}}, &coded); !res.IsError ||
		coded.Code != toolbox.CodeNotFound || !strings.Contains(coded.Message, "01JB2Q3N5V8XK4M7R9T1W6Y0ZZ") {
		t.Errorf("memory_remove with an unknown id = %+v, want not_found naming it", coded)
	}
	if !fileHasID(f.readMemories(t), added.ID) {
		t.Fatal("a refused bulk remove removed a memory")
	}
	var removed toolbox.MemoryRemoved
	res = callTool(t, cs, "memory_remove", map[string]any{"ids": []string{added.ID, committedMemory.ID}}, &removed)
	checkOutput(t, outputs, "memory_remove", res)
	if len(removed.Removed) != 2 || fileHasID(f.readMemories(t), added.ID) || fileHasID(f.readMemories(t), committedMemory.ID) {
		t.Errorf("bulk memory_remove = %+v; file still has them?", removed)
	}
	if res := callTool(t, cs, "memory_get", map[string]any{"id": added.ID}, &coded); !res.IsError || coded.Code != toolbox.CodeNotFound {
		t.Errorf("memory_get of a removed memory = %+v, want not_found", coded)
	}
}
