package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/memory"
)

// Limits on how many memories one call returns: enough to answer, few enough
// that a result never crowds the context the way injected memory would.
const (
	defaultSearchLimit = 8
	maxSearchLimit     = 50
	defaultListLimit   = 50
	maxListLimit       = 200
)

// MemoryHit is one memory as a tool returns it: only what a model needs to
// use or cite the fact.
type MemoryHit struct {
	ID      string  `json:"id"`
	Content string  `json:"content"`
	Score   float64 `json:"score,omitempty"`
	Scope   string  `json:"scope"`
	Kind    string  `json:"kind"`
	Topic   string  `json:"topic,omitempty"`
	Source  string  `json:"source,omitempty"`
}

// MemoryHits is the result of memory_search and memory_list.
type MemoryHits struct {
	Memories []MemoryHit `json:"memories"`
	// Note explains an empty result, so the model does not search forever.
	Note string `json:"note,omitempty"`
}

// MemoryAdded is the result of memory_add.
type MemoryAdded struct {
	ID       string `json:"id"`
	Scope    string `json:"scope"`
	Existing bool   `json:"existing,omitempty"`
	Warning  string `json:"warning,omitempty"`
}

// MemoryRemoved is the result of memory_remove.
type MemoryRemoved struct {
	Removed []MemoryHit `json:"removed"`
}

func hit(m memory.Memory, score float64) MemoryHit {
	return MemoryHit{ID: m.ID, Content: m.Content, Score: score, Scope: string(m.Scope),
		Kind: string(m.Kind), Topic: m.Topic, Source: m.Source}
}

// SourceAgent marks memories added through these tools unless the caller
// names another source.
const SourceAgent = "agent"

// MemoryTools returns memory_search, memory_add, memory_remove and
// memory_list over tk; memories the model adds are marked with source "agent".
func MemoryTools(tk memory.Toolkit) []Tool { return MemoryToolsFor(tk, SourceAgent) }

// MemoryToolsFor is MemoryTools with another source for added memories,
// e.g. "mcp".
func MemoryToolsFor(tk memory.Toolkit, source string) []Tool {
	return []Tool{
		memorySearch(tk),
		memoryAdd(tk, source),
		memoryRemove(tk),
		memoryList(tk),
	}
}

// The enums come from memory.Scopes and memory.Kinds so that a new scope or
// kind reaches the model without editing a schema by hand.
var (
	filterProps = `
    "scope": {"type": "string", "enum": ` + enumJSON(memory.Scopes) + `},
    "kind": {"type": "string", "enum": ` + enumJSON(memory.Kinds) + `}`
	durableScopes = enumJSON(slices.DeleteFunc(slices.Clone(memory.Scopes), func(s memory.Scope) bool { return s == memory.ScopeSession }))
)

func enumJSON[T ~string](values []T) string {
	b, _ := json.Marshal(values) // a slice of strings always marshals
	return string(b)
}

func memorySearch(tk memory.Toolkit) Tool {
	return Tool{
		Name:    "memory_search",
		Summary: "search long-term memory (rules, conventions, past observations, user preferences)",
		Description: "Search long-term memory: AGENTS.md rules, conventions, commands, architecture, past lessons, " +
			"user preferences. None of it is in your prompt: search before guessing about the project or user.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "query": {"type": "string"},
    "queries": {"type": "array", "items": {"type": "string"}, "description": "Several topics at once."},` + filterProps + `,
    "limit": {"type": "integer"}
  }
}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Query   string   `json:"query"`
				Queries []string `json:"queries"`
				Scope   string   `json:"scope"`
				Kind    string   `json:"kind"`
				Limit   int      `json:"limit"`
			}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			q := memory.Query{Text: strings.TrimSpace(a.Query)}
			for _, s := range a.Queries {
				if s = strings.TrimSpace(s); s != "" {
					q.Queries = append(q.Queries, s)
				}
			}
			if q.Text == "" && len(q.Queries) == 0 {
				return nil, errorf(CodeInvalidArgs, "give a query (or queries) saying what to look for")
			}
			f, err := parseFilter(a.Scope, a.Kind, "", a.Limit, defaultSearchLimit, maxSearchLimit)
			if err != nil {
				return nil, err
			}
			q.Filter = f
			results, err := tk.Search(ctx, q)
			if err != nil {
				return nil, err
			}
			out := MemoryHits{Memories: make([]MemoryHit, 0, len(results))}
			for _, r := range results {
				out.Memories = append(out.Memories, hit(r.Memory, r.Score))
			}
			if len(out.Memories) == 0 {
				out.Note = "nothing matched; try other words, or read the code"
			}
			return out, nil
		},
	}
}

func memoryAdd(tk memory.Toolkit, source string) Tool {
	return Tool{
		Name:    "memory_add",
		Summary: "remember one fact for future tasks",
		Description: "Remember one durable, self-contained fact: a convention, a working command, a decision and " +
			"why, a user preference. No secrets.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "content": {"type": "string"},
    "scope": {"type": "string", "enum": ` + durableScopes + `, "description": "Default project; user = every project."},
    "topic": {"type": "string"}
  },
  "required": ["content"]
}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Content string `json:"content"`
				Scope   string `json:"scope"`
				Topic   string `json:"topic"`
			}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			scope := memory.ScopeProject
			if a.Scope != "" {
				s, err := memory.ParseScope(a.Scope)
				if err != nil {
					return nil, errorf(CodeInvalidArgs, "%v", err)
				}
				scope = s
			}
			if scope == memory.ScopeSession {
				return nil, errorf(CodeInvalidArgs, "memory_add stores durable facts: use scope project or user")
			}
			if err := memory.ValidateContent(a.Content); err != nil {
				return nil, errorf(CodeInvalidArgs, "%v", err)
			}
			added, err := tk.Add(ctx, memory.Draft{
				Content: strings.TrimSpace(a.Content),
				Scope:   scope,
				Kind:    memory.KindStored,
				Topic:   strings.TrimSpace(a.Topic),
				Source:  source,
			})
			if err != nil {
				return nil, err
			}
			return MemoryAdded{ID: added.Memory.ID, Scope: string(added.Memory.Scope),
				Existing: added.Existing, Warning: added.Warning}, nil
		},
	}
}

func memoryRemove(tk memory.Toolkit) Tool {
	return Tool{
		Name:        "memory_remove",
		Summary:     "delete a memory that is wrong or stale",
		Description: "Delete a wrong or outdated memory by its id from memory_search.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "id": {"type": "string"}
  },
  "required": ["id"]
}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				ID string `json:"id"`
			}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			id := strings.TrimSpace(a.ID)
			if id == "" {
				return nil, errorf(CodeInvalidArgs, "give the id of the memory to remove (from memory_search)")
			}
			removed, err := tk.Remove(ctx, id)
			if errors.Is(err, memory.ErrNotFound) {
				return nil, errorf(CodeNotFound, "no memory has id %q; search again for the current id", id)
			}
			if err != nil {
				return nil, err
			}
			out := MemoryRemoved{Removed: make([]MemoryHit, 0, len(removed))}
			for _, m := range removed {
				out.Removed = append(out.Removed, hit(m, 0))
			}
			return out, nil
		},
	}
}

func memoryList(tk memory.Toolkit) Tool {
	return Tool{
		Name:        "memory_list",
		Summary:     "list memories by scope, kind or topic",
		Description: "List memories by scope, kind or topic, without a query, oldest first.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {` + filterProps + `,
    "topic": {"type": "string"},
    "limit": {"type": "integer", "description": "Default 50."}
  }
}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Scope string `json:"scope"`
				Kind  string `json:"kind"`
				Topic string `json:"topic"`
				Limit int    `json:"limit"`
			}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			f, err := parseFilter(a.Scope, a.Kind, a.Topic, a.Limit, defaultListLimit, maxListLimit)
			if err != nil {
				return nil, err
			}
			mems, err := tk.List(ctx, f)
			if err != nil {
				return nil, err
			}
			out := MemoryHits{Memories: make([]MemoryHit, 0, len(mems))}
			for _, m := range mems {
				out.Memories = append(out.Memories, hit(m, 0))
			}
			if len(out.Memories) == 0 {
				out.Note = "no memories match these filters"
			}
			return out, nil
		},
	}
}

func parseFilter(scope, kind, topic string, limit, def, max int) (memory.Filter, error) {
	f := memory.Filter{Topic: strings.TrimSpace(topic), Limit: def}
	if scope != "" {
		s, err := memory.ParseScope(scope)
		if err != nil {
			return f, errorf(CodeInvalidArgs, "%v", err)
		}
		f.Scope = s
	}
	if kind != "" {
		k, err := memory.ParseKind(kind)
		if err != nil {
			return f, errorf(CodeInvalidArgs, "%v", err)
		}
		f.Kind = k
	}
	switch {
	case limit < 0:
		return f, errorf(CodeInvalidArgs, "limit must be positive, got %d", limit)
	case limit > max:
		f.Limit = max
	case limit > 0:
		f.Limit = limit
	}
	return f, nil
}
