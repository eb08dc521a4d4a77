package toolbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/agent/internal/agenttest"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

func call(t *testing.T, tools []toolbox.Tool, name, args string) (any, error) {
	t.Helper()
	for _, tool := range tools {
		if tool.Name == name {
			return tool.Call(context.Background(), json.RawMessage(args))
		}
	}
	t.Fatalf("no tool %s", name)
	return nil, nil
}

func code(err error) string {
	var te *toolbox.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return ""
}

func TestMemoryToolsRoundTrip(t *testing.T) {
	tk, _ := agenttest.Open(t)
	tools := toolbox.MemoryTools(tk)

	res, err := call(t, tools, "memory_add", `{"content": "Run the tests with go test ./memory/...", "topic": "testing"}`)
	if err != nil {
		t.Fatal(err)
	}
	added := res.(toolbox.MemoryAdded)
	if added.ID == "" || added.Scope != "project" || added.Existing {
		t.Fatalf("add: %+v", added)
	}
	res, err = call(t, tools, "memory_add", `{"content": "run the tests   with go test ./memory/..."}`)
	if err != nil || !res.(toolbox.MemoryAdded).Existing || res.(toolbox.MemoryAdded).ID != added.ID {
		t.Fatalf("re-adding the same fact: %v %+v", err, res)
	}
	if _, err := call(t, tools, "memory_add", `{"content": "The user prefers tabs", "scope": "user"}`); err != nil {
		t.Fatal(err)
	}

	res, err = call(t, tools, "memory_search", `{"queries": ["how to run tests", "tabs"]}`)
	if err != nil {
		t.Fatal(err)
	}
	hits := res.(toolbox.MemoryHits).Memories
	if len(hits) != 2 {
		t.Fatalf("search found %d, want 2: %+v", len(hits), hits)
	}
	var sawTest bool
	for _, h := range hits {
		if h.ID == added.ID {
			sawTest = h.Topic == "testing" && h.Source == toolbox.SourceAgent && h.Kind == "stored" && h.Score > 0
		}
	}
	if !sawTest {
		t.Fatalf("search hits lack the test memory with its fields: %+v", hits)
	}

	res, err = call(t, tools, "memory_list", `{"scope": "user"}`)
	if err != nil {
		t.Fatal(err)
	}
	if l := res.(toolbox.MemoryHits).Memories; len(l) != 1 || l[0].Content != "The user prefers tabs" {
		t.Fatalf("list user: %+v", l)
	}
	// A topic filter keeps the topics beneath it, as rules imported from
	// AGENTS.md are filed under their headings.
	if _, err := call(t, tools, "memory_add", `{"content": "Table-driven tests name each case", "topic": "testing / unit tests"}`); err != nil {
		t.Fatal(err)
	}
	res, err = call(t, tools, "memory_list", `{"topic": "testing"}`)
	if err != nil {
		t.Fatal(err)
	}
	if l := res.(toolbox.MemoryHits).Memories; len(l) != 2 {
		t.Fatalf("list topic testing: %+v, want the testing memory and the one beneath it", l)
	}

	res, err = call(t, tools, "memory_remove", `{"id": "`+added.ID+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.(toolbox.MemoryRemoved).Removed; len(r) != 1 || r[0].ID != added.ID {
		t.Fatalf("remove: %+v", r)
	}
	_, err = call(t, tools, "memory_remove", `{"id": "`+added.ID+`"}`)
	if code(err) != toolbox.CodeNotFound {
		t.Fatalf("removing twice: %v", err)
	}
	res, err = call(t, tools, "memory_search", `{"query": "run the tests"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.(toolbox.MemoryHits).Memories {
		if h.ID == added.ID {
			t.Fatalf("removed memory still found: %+v", h)
		}
	}
	res, err = call(t, tools, "memory_search", `{"query": "zebra", "kind": "rule"}`)
	if err != nil {
		t.Fatal(err)
	}
	if h := res.(toolbox.MemoryHits); len(h.Memories) != 0 || h.Note == "" {
		t.Fatalf("an empty search should explain itself: %+v", h)
	}
}

func TestMemoryToolsRejectBadArguments(t *testing.T) {
	tk, _ := agenttest.Open(t)
	tools := toolbox.MemoryTools(tk)
	long := func(n int) string { return strings.Repeat("a", n) }
	queries := `"` + strings.Repeat(`x", "`, 10) + `x"`
	// want is the start of the message: the argument at fault, then why.
	cases := []struct{ tool, args, want string }{
		{"memory_search", `{}`, "query: give a query"},
		{"memory_search", `{"query": "x", "scope": "team"}`, "scope: unknown scope"},
		{"memory_search", `{"query": "x", "kind": "note"}`, "kind: unknown kind"},
		{"memory_search", `{"qurey": "x"}`, `arguments do not match the schema: unknown field "qurey"`},
		{"memory_search", `{"query": "x", "limit": 0}`, "limit: must be between 1 and 50, got 0"},
		{"memory_search", `{"query": "x", "limit": 51}`, "limit: must be between 1 and 50, got 51"},
		{"memory_search", `{"query": "` + long(memory.MaxContentBytes+1) + `"}`, "query: 8193 bytes, the limit is 8192"},
		{"memory_search", `{"queries": ["x", "` + long(memory.MaxContentBytes+1) + `"]}`, "queries[1]: 8193 bytes"},
		{"memory_search", `{"queries": [` + queries + `]}`, "queries: 11 queries, the limit is 10"},
		{"memory_search", "{\"query\": \"caf\xe9\"}", "query: is not valid UTF-8"},
		{"memory_search", `{"query": "x\ud800y"}`, "query: is not valid UTF-8"},
		{"memory_add", `{"content": "  "}`, "content: memory is empty"},
		{"memory_add", `{"content": "x", "scope": "session"}`, "scope: memory_add stores durable facts"},
		{"memory_add", `{"content": "` + long(memory.MaxContentBytes+1) + `"}`, "content: memory is too large"},
		{"memory_add", `{"content": "x", "topic": "` + long(5000) + `"}`, "topic: 5000 bytes, the limit is 64"},
		{"memory_add", `{"content": "x", "topic": "two\nlines"}`, "topic: must be a single line"},
		{"memory_add", "{\"content\": \"ok\", \"topic\": \"\xff\"}", "topic: is not valid UTF-8"},
		{"memory_add", `{"content": "pair \ud83d\ude00 then lone \udc00"}`, "content: is not valid UTF-8"},
		{"memory_remove", `{}`, "id: give the id"},
		{"memory_list", `{"limit": -1}`, "limit: must be between 1 and 200, got -1"},
		{"memory_list", `{"limit": 201}`, "limit: must be between 1 and 200, got 201"},
		{"memory_list", `{"topic": "` + long(65) + `"}`, "topic: 65 bytes, the limit is 64"},
		{"memory_list", `{"cursor": "not-a-cursor"}`, "cursor: not a nextCursor from memory_list"},
	}
	for _, c := range cases {
		_, err := call(t, tools, c.tool, c.args)
		var te *toolbox.Error
		if !errors.As(err, &te) || te.Code != toolbox.CodeInvalidArgs || !strings.HasPrefix(te.Message, c.want) {
			t.Errorf("%s %.60q: got %v, want invalid_arguments starting %q", c.tool, c.args, err, c.want)
		}
	}
	if l, _ := tk.List(context.Background(), memory.Filter{}); len(l) != 0 {
		t.Fatalf("bad calls stored %d memories", len(l))
	}
}

// TestMemoryToolsAcceptTheirLimits: what the schema allows, the tool takes,
// and escaped text that is valid UTF-8 is stored as it was sent.
func TestMemoryToolsAcceptTheirLimits(t *testing.T) {
	tk, _ := agenttest.Open(t)
	tools := toolbox.MemoryTools(tk)
	topic := strings.Repeat("t", 64)
	res, err := call(t, tools, "memory_add", `{"content": "smile \ud83d\ude00 `+strings.Repeat("a", memory.MaxContentBytes-20)+`", "topic": "`+topic+`"}`)
	if err != nil {
		t.Fatalf("a memory at the limits: %v", err)
	}
	id := res.(toolbox.MemoryAdded).ID
	if _, err := call(t, tools, "memory_search", `{"query": "`+strings.Repeat("a", memory.MaxContentBytes)+`", "limit": 50}`); err != nil {
		t.Fatalf("a query at the limits: %v", err)
	}
	res, err = call(t, tools, "memory_list", `{"topic": "`+topic+`", "limit": 200}`)
	if err != nil {
		t.Fatal(err)
	}
	if l := res.(toolbox.MemoryHits).Memories; len(l) != 1 || l[0].ID != id || !strings.HasPrefix(l[0].Content, "smile \U0001F600 ") {
		t.Fatalf("list by a 64-byte topic: %+v", l)
	}
}

func TestMemoryToolSchemasAreValidJSON(t *testing.T) {
	tk, _ := agenttest.Open(t)
	for _, tool := range toolbox.MemoryTools(tk) {
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(tool.Schema, &schema); err != nil || schema.Type != "object" || len(schema.Properties) == 0 {
			t.Errorf("%s: schema %s: %v", tool.Name, tool.Schema, err)
		}
		if tool.Summary == "" || tool.Description == "" {
			t.Errorf("%s lacks a summary or description", tool.Name)
		}
		var out struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(tool.Output, &out); err != nil || out.Type != "object" || len(out.Properties) == 0 {
			t.Errorf("%s: output schema %s: %v", tool.Name, tool.Output, err)
		}
	}
}

// TestMemoryToolSchemasDeclareTheirLimits: the model reads the schema, not
// the code, so every argument is described and every limit the code
// enforces is in it.
func TestMemoryToolSchemasDeclareTheirLimits(t *testing.T) {
	tk, _ := agenttest.Open(t)
	type prop struct {
		Description string
		Enum        []string
		MaxLength   *int
		MaxItems    *int
		Minimum     *int
		Maximum     *int
		Items       *struct{ MaxLength *int }
	}
	want := map[string]struct {
		maxLength     map[string]int
		limit         int
		maxQueryItems int
	}{
		"memory_search": {maxLength: map[string]int{"query": memory.MaxContentBytes}, limit: 50, maxQueryItems: 10},
		"memory_add":    {maxLength: map[string]int{"content": memory.MaxContentBytes, "topic": 64}},
		"memory_remove": {},
		"memory_list":   {maxLength: map[string]int{"topic": 64}, limit: 200},
	}
	// The agent's own tools carry the limits without the descriptions, which
	// its system prompt stands in for; MCP clients get both.
	described := make(map[string]bool)
	for _, tool := range toolbox.MemoryToolsFor(tk, "mcp") {
		described[tool.Name] = true
	}
	for _, tool := range append(toolbox.MemoryToolsFor(tk, "mcp"), toolbox.MemoryTools(tk)...) {
		var schema struct{ Properties map[string]prop }
		if err := json.Unmarshal(tool.Schema, &schema); err != nil {
			t.Fatal(err)
		}
		w := want[tool.Name]
		full := described[tool.Name]
		described[tool.Name] = false // the second of each name is the agent's
		for name, p := range schema.Properties {
			if !full {
				if p.Description != "" {
					t.Errorf("agent's %s.%s keeps its description, which the prompt budget does not allow", tool.Name, name)
				}
				continue
			}
			if p.Description == "" {
				t.Errorf("%s.%s has no description", tool.Name, name)
			}
			if name == "scope" && !strings.Contains(p.Description, "ACOLYTE_SESSION") && slices.Contains(p.Enum, "session") {
				t.Errorf("%s.scope offers session without saying it needs ACOLYTE_SESSION: %q", tool.Name, p.Description)
			}
			if name == "kind" {
				for _, k := range memory.Kinds {
					if !strings.Contains(p.Description, string(k)) {
						t.Errorf("%s.kind does not describe %s", tool.Name, k)
					}
				}
			}
		}
		for name, n := range w.maxLength {
			if p := schema.Properties[name]; p.MaxLength == nil || *p.MaxLength != n {
				t.Errorf("%s.%s maxLength = %v, want %d", tool.Name, name, p.MaxLength, n)
			}
		}
		if l, ok := schema.Properties["limit"]; w.limit != 0 && (!ok || l.Minimum == nil || *l.Minimum != 1 || l.Maximum == nil || *l.Maximum != w.limit) {
			t.Errorf("%s.limit = %+v, want minimum 1 and maximum %d", tool.Name, l, w.limit)
		}
		if w.maxQueryItems != 0 {
			q := schema.Properties["queries"]
			if q.MaxItems == nil || *q.MaxItems != w.maxQueryItems || q.Items == nil || q.Items.MaxLength == nil || *q.Items.MaxLength != memory.MaxContentBytes {
				t.Errorf("%s.queries = %+v, want maxItems %d and items of maxLength %d", tool.Name, q, w.maxQueryItems, memory.MaxContentBytes)
			}
		}
	}
}

// A question the memories do not answer gets no hits and says so, rather
// than the least bad memories.
func TestMemorySearchSaysNoMemoryMatches(t *testing.T) {
	tk, _ := agenttest.Open(t)
	tools := toolbox.MemoryTools(tk)
	for _, c := range []string{
		"Run the unit tests with make test before pushing",
		"Releases are cut from the main branch every Tuesday",
		"Database migrations live in db/migrations and run in order",
	} {
		if _, err := call(t, tools, "memory_add", `{"content": "`+c+`"}`); err != nil {
			t.Fatal(err)
		}
	}
	res, err := call(t, tools, "memory_search", `{"query": "what is the recipe for banana bread?"}`)
	if err != nil {
		t.Fatal(err)
	}
	if h := res.(toolbox.MemoryHits); len(h.Memories) != 0 || !strings.HasPrefix(h.Note, "no memory matches") {
		t.Fatalf("an unrelated question: %+v", h)
	}
	res, err = call(t, tools, "memory_search", `{"query": "when are releases cut?"}`)
	if err != nil {
		t.Fatal(err)
	}
	if h := res.(toolbox.MemoryHits).Memories; len(h) == 0 || h[0].Content != "Releases are cut from the main branch every Tuesday" {
		t.Fatalf("a question they answer: %+v", h)
	}
}

// TestMemoryAddDefaultsToUserOutsideARepository: the agent's memory_add
// agrees with the CLI's remember and the MCP server's: without a
// repository no scope means user, the schema says so and offers no
// project scope, and asking for project is refused naming what is offered.
func TestMemoryAddDefaultsToUserOutsideARepository(t *testing.T) {
	inRepo, store := agenttest.Open(t)
	outside := memory.Scoped{Store: store, Visibility: memory.Visibility{SessionKey: inRepo.SessionKey}}
	for _, c := range []struct {
		tk   memory.Toolkit
		want memory.Scope
	}{{inRepo, memory.ScopeProject}, {outside, memory.ScopeUser}} {
		tools := toolbox.MemoryTools(c.tk)
		var add toolbox.Tool
		for _, tool := range tools {
			if tool.Name == "memory_add" {
				add = tool
			}
		}
		var s struct {
			Properties struct {
				Scope struct {
					Default string   `json:"default"`
					Enum    []string `json:"enum"`
				} `json:"scope"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(add.Schema, &s); err != nil {
			t.Fatal(err)
		}
		if s.Properties.Scope.Default != string(c.want) || slices.Contains(s.Properties.Scope.Enum, "project") != (c.want == memory.ScopeProject) {
			t.Errorf("memory_add scope schema = %+v, want default %s", s.Properties.Scope, c.want)
		}
		res, err := call(t, tools, "memory_add", `{"content": "The user prefers short answers `+string(c.want)+`"}`)
		if err != nil || res.(toolbox.MemoryAdded).Scope != string(c.want) {
			t.Errorf("memory_add without a scope = %+v, %v; want scope %s", res, err, c.want)
		}
	}
	_, err := call(t, toolbox.MemoryTools(outside), "memory_add", `{"content": "x is y", "scope": "project"}`)
	if code(err) != toolbox.CodeInvalidArgs || !strings.Contains(err.Error(), `"project"`) || !strings.Contains(err.Error(), "user") {
		t.Errorf("memory_add scope project outside a repository: %v", err)
	}
}
