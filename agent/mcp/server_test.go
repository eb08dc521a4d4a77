package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
)

// connect runs s on an in-memory transport and returns a client session.
func connect(t testing.TB, s *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx := t.Context()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func call(t testing.TB, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v; tool failures must come back as results", name, err)
	}
	return res
}

func text(t testing.TB, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content item, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("want text content, got %T", res.Content[0])
	}
	return tc.Text
}

// adapterTools exercise every way a tool can end: a value, an error, a panic.
func adapterTools() []toolbox.Tool {
	schema := json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}}}`)
	return []toolbox.Tool{
		{
			Name: "echo", Description: "Echoes its word.", Schema: schema,
			Call: func(_ context.Context, args json.RawMessage) (any, error) {
				var a struct{ Word string }
				if err := json.Unmarshal(args, &a); err != nil {
					return nil, err
				}
				if a.Word == "" {
					return nil, &toolbox.Error{Code: toolbox.CodeInvalidArgs, Message: "give a word"}
				}
				return map[string]string{"echo": a.Word}, nil
			},
		},
		{
			Name: "letters", Description: "Splits its word.", Schema: schema,
			Call: func(_ context.Context, args json.RawMessage) (any, error) {
				var a struct{ Word string }
				_ = json.Unmarshal(args, &a)
				return strings.Split(a.Word, ""), nil
			},
		},
		{
			Name: "broken", Description: "Always panics.", Schema: schema,
			Call: func(context.Context, json.RawMessage) (any, error) {
				var m map[string]int
				//lint:ignore SA5000 the panic is the point: the server's panic guard is under test
				m["x"]++ // a nil-map write, the kind of bug a panic guard is for
				return nil, nil
			},
		},
	}
}

func TestToolsKeepTheirNamesDescriptionsAndSchemas(t *testing.T) {
	s, _ := newServer(adapterTools(), Options{})
	cs := connect(t, s)
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*sdk.Tool{}
	for _, tool := range list.Tools {
		got[tool.Name] = tool
	}
	for _, want := range adapterTools() {
		tool := got[want.Name]
		if tool == nil {
			t.Fatalf("tool %s not listed", want.Name)
		}
		if tool.Description != want.Description {
			t.Errorf("%s description = %q, want %q", want.Name, tool.Description, want.Description)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(schema), `"word":{"type":"string"}`) {
			t.Errorf("%s schema = %s, want the tool's own", want.Name, schema)
		}
	}
}

func TestResultsAreJSONTextAndStructuredWhenObjects(t *testing.T) {
	s, _ := newServer(adapterTools(), Options{})
	cs := connect(t, s)

	res := call(t, cs, "echo", map[string]any{"word": "hello"})
	if res.IsError {
		t.Fatalf("unexpected error: %s", text(t, res))
	}
	if got := text(t, res); got != `{"echo":"hello"}` {
		t.Errorf("text = %s", got)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"echo":"hello"}` {
		t.Errorf("structured content = %s", sc)
	}

	res = call(t, cs, "letters", map[string]any{"word": "ab"})
	if got := text(t, res); got != `["a","b"]` {
		t.Errorf("text = %s", got)
	}
	if res.StructuredContent != nil {
		t.Errorf("an array must not be sent as structured content, got %v", res.StructuredContent)
	}
}

func TestToolFailuresAreToolErrorsAndTheServerCarriesOn(t *testing.T) {
	s, _ := newServer(adapterTools(), Options{})
	cs := connect(t, s)

	res := call(t, cs, "echo", map[string]any{})
	if !res.IsError {
		t.Fatal("a failed call must set isError")
	}
	var coded struct{ Error toolbox.Error }
	if err := json.Unmarshal([]byte(text(t, res)), &coded); err != nil {
		t.Fatalf("error text is not the coded JSON form: %v", err)
	}
	if coded.Error.Code != toolbox.CodeInvalidArgs || coded.Error.Message != "give a word" {
		t.Errorf("error = %+v", coded.Error)
	}

	res = call(t, cs, "broken", nil)
	if !res.IsError || !strings.Contains(text(t, res), "internal error in broken") {
		t.Fatalf("a panic must become a tool error, got %+v", res)
	}

	if res := call(t, cs, "echo", map[string]any{"word": "still here"}); res.IsError {
		t.Fatalf("server did not recover: %s", text(t, res))
	}
}

func TestBeforeCallRunsFirstAndItsFailureFailsOnlyThatCall(t *testing.T) {
	var calls int
	refresh := errors.New(".acolyte/memories.jsonl line 3: unexpected end of JSON")
	s, _ := newServer(adapterTools(), Options{BeforeCall: func(context.Context) error {
		calls++
		if calls == 2 {
			return refresh
		}
		return nil
	}})
	cs := connect(t, s)

	call(t, cs, "echo", map[string]any{"word": "one"})
	res := call(t, cs, "echo", map[string]any{"word": "two"})
	if !res.IsError {
		t.Fatal("a failing freshness hook must fail the call")
	}
	if got := text(t, res); !strings.Contains(got, "line 3") || !strings.Contains(got, ".acolyte/") {
		t.Errorf("error should explain what could not be refreshed, got %s", got)
	}
	if res := call(t, cs, "echo", map[string]any{"word": "three"}); res.IsError {
		t.Fatalf("call after a failed refresh: %s", text(t, res))
	}
	if calls != 3 {
		t.Errorf("BeforeCall ran %d times for 3 calls", calls)
	}
}

func TestInstructionsTellTheClientToSearch(t *testing.T) {
	s, _ := newServer(adapterTools(), Options{Version: "1.2.3"})
	cs := connect(t, s)
	init := cs.InitializeResult()
	if !strings.Contains(init.Instructions, "memory_search") {
		t.Errorf("instructions do not mention memory_search: %q", init.Instructions)
	}
	if init.ServerInfo.Name != "acolyte" || init.ServerInfo.Version != "1.2.3" {
		t.Errorf("server info = %+v", init.ServerInfo)
	}
}
