package toolbox_test

import (
	"context"
	"encoding/json"
	"errors"
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
	cases := []struct{ tool, args, want string }{
		{"memory_search", `{}`, "give a query"},
		{"memory_search", `{"query": "x", "scope": "team"}`, "unknown scope"},
		{"memory_search", `{"query": "x", "kind": "note"}`, "unknown kind"},
		{"memory_search", `{"qurey": "x"}`, "unknown field"},
		{"memory_add", `{"content": "  "}`, "memory is empty"},
		{"memory_add", `{"content": "x", "scope": "session"}`, "project or user"},
		{"memory_add", `{"content": "` + strings.Repeat("a", memory.MaxContentBytes+1) + `"}`, "too large"},
		{"memory_remove", `{}`, "give the id"},
		{"memory_list", `{"limit": -1}`, "limit must be positive"},
	}
	for _, c := range cases {
		_, err := call(t, tools, c.tool, c.args)
		if code(err) != toolbox.CodeInvalidArgs || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %.60s: got %v, want invalid_arguments mentioning %q", c.tool, c.args, err, c.want)
		}
	}
	if l, _ := tk.List(context.Background(), memory.Filter{}); len(l) != 0 {
		t.Fatalf("bad calls stored %d memories", len(l))
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
	}
}
