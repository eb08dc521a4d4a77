package toolbox

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acolyte-dev/acolyte/memory/team"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/memory"
)

// Limits on what one call takes and returns. The schemas declare each of
// them, and a call outside them is refused rather than quietly cut down, so
// a model never reads a truncated answer as a whole one.
const (
	defaultSearchLimit = 8
	maxSearchLimit     = 50
	defaultListLimit   = 50
	maxListLimit       = 200
	// maxQueries bounds one search's fan-out: each query is a search of its own.
	maxQueries = 10
	// maxQueryBytes is what the store accepts as query text (it checks queries
	// as it checks content).
	maxQueryBytes = memory.MaxContentBytes
	// maxTopicBytes is the topic limit memory.Memory.Validate enforces; the
	// tests add a topic of exactly this size through the store.
	maxTopicBytes = memory.MaxTopicBytes
)

// CodeSecret is the code of a project memory refused because it looks like a
// credential: the model should rewrite it as a pointer, not retry it.
const CodeSecret = "secret_refused"

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
	// Globs are the files the memory applies to, when it is scoped.
	Globs []string `json:"globs,omitempty"`
	// Stale says which files the memory cites changed or went since it was
	// written (memory_search only); nil when none did.
	Stale *memory.Staleness `json:"stale,omitempty"`
}

// MemoryHits is the result of memory_search and memory_list.
type MemoryHits struct {
	Memories []MemoryHit `json:"memories"`
	// NextCursor is set when memory_list has more: pass it back as cursor.
	// It is named as MCP names its own pagination.
	NextCursor string `json:"nextCursor,omitempty"`
	// Note explains an empty result, so the model does not search forever.
	Note string `json:"note,omitempty"`
	// Team says why team memories are missing from this answer (the team
	// database was down or slow); empty when they are not.
	Team string `json:"team,omitempty"`
}

// MemoryAdded is the result of memory_add.
type MemoryAdded struct {
	ID       string `json:"id"`
	Scope    string `json:"scope"`
	Existing bool   `json:"existing,omitempty"`
	Warning  string `json:"warning,omitempty"`
	// Similar are the stored memories nearest the new one, so that the model
	// can update or remove one the new fact repeats or contradicts instead
	// of keeping both; empty when none is close.
	Similar []MemoryHit `json:"similar,omitempty"`
	Note    string      `json:"note,omitempty"`
}

// MemoryRemoved is the result of memory_remove.
type MemoryRemoved struct {
	Removed []MemoryHit `json:"removed"`
}

func hit(m memory.Memory, score float64) MemoryHit {
	return MemoryHit{ID: m.ID, Content: m.Content, Score: score, Scope: string(m.Scope),
		Kind: string(m.Kind), Topic: m.Topic, Source: m.Source, Globs: m.Globs}
}

// SourceAgent marks memories added through these tools unless the caller
// names another source.
const SourceAgent = "agent"

// MemoryTools returns memory_search, memory_add, memory_remove and
// memory_list over tk for acolyte's own agent; memories the model adds are
// marked with source "agent". Their schemas declare every limit but leave
// out the descriptions of the arguments: the agent's system prompt explains
// memory, and every declared byte is paid on each request of every task.
func MemoryTools(tk memory.Toolkit) []Tool {
	return MemoryConfig{Toolkit: tk, Source: SourceAgent}.AgentTools()
}

// MemoryToolsFor returns the memory tools with every argument described,
// for clients that have no acolyte prompt, such as MCP clients; added
// memories are marked with source, e.g. "mcp".
func MemoryToolsFor(tk memory.Toolkit, source string) []Tool {
	return MemoryConfig{Toolkit: tk, Source: source}.Tools()
}

// MemoryConfig is what the memory tools serve: a toolkit, and what only
// the caller knows about it.
type MemoryConfig struct {
	Toolkit memory.Toolkit
	// Source marks the memories added through the tools, e.g. "mcp".
	Source string
	// Stale, when set, says which of memory_search's results cite files
	// that changed or went since they were written; the CLI asks git.
	Stale memory.StaleFunc
}

// Tools returns the memory tools with every argument described, as
// MemoryToolsFor does.
func (c MemoryConfig) Tools() []Tool {
	return []Tool{
		memorySearch(c.Toolkit, c.Stale),
		memoryAdd(c.Toolkit, c.Source),
		memoryRemove(c.Toolkit),
		memoryList(c.Toolkit),
		memoryGet(c.Toolkit),
		memoryUpdate(c.Toolkit),
	}
}

// AgentTools returns the memory tools without argument descriptions, for
// acolyte's own agent, as MemoryTools does.
func (c MemoryConfig) AgentTools() []Tool {
	tools := c.Tools()
	for i := range tools {
		tools[i].Schema = withoutArgDescriptions(tools[i].Schema)
	}
	return tools
}

// obj is a JSON Schema object; schemas are built from Go values so that the
// limits, scopes and kinds in them are the constants the code enforces.
type obj = map[string]any

func schema(props obj, required ...string) json.RawMessage {
	s := obj{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // maps of strings, numbers and slices always marshal
	}
	return b
}

// withoutArgDescriptions drops the description of each argument from an
// object schema, keeping types, enums and limits.
func withoutArgDescriptions(schema json.RawMessage) json.RawMessage {
	var s struct {
		Type       string         `json:"type"`
		Properties map[string]obj `json:"properties"`
		Required   []string       `json:"required,omitempty"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return schema
	}
	for _, p := range s.Properties {
		delete(p, "description")
	}
	b, err := json.Marshal(s)
	if err != nil {
		return schema
	}
	return b
}

func str(description string) obj { return obj{"type": "string", "description": description} }

func strMax(description string, maxLength int) obj {
	return obj{"type": "string", "description": description, "maxLength": maxLength}
}

func limitProp(def, max int) obj {
	return obj{"type": "integer", "minimum": 1, "maximum": max,
		"description": fmt.Sprintf("How many memories to return at most; default %d.", def)}
}

// The enums come from memory.Scopes and memory.Kinds so that a new scope or
// kind reaches the model without editing a schema by hand.
// Team appears only when the toolkit reaches a team database
// (memory.ScopesOf).
func durableScopes(scopes []memory.Scope) []memory.Scope {
	return slices.DeleteFunc(slices.Clone(scopes), func(s memory.Scope) bool { return s == memory.ScopeSession })
}

const scopeFilterHelp = "Only memories of this scope. project: this repository's, committed in .acolyte/; " +
	"user: the user's own, in every project; session: what this session observed, which needs the " +
	"session id acolyte was started with (--session or ACOLYTE_SESSION) and is empty without one."

const teamScopeHelp = " team: shared live with everyone on your team, in every repository."

func scopeHelp(help string, scopes []memory.Scope) string {
	if slices.Contains(scopes, memory.ScopeTeam) {
		return help + teamScopeHelp
	}
	return help
}

func filterProps(props obj, scopes []memory.Scope) obj {
	props["scope"] = obj{"type": "string", "enum": scopes, "description": scopeHelp(scopeFilterHelp, scopes)}
	props["kind"] = obj{"type": "string", "enum": memory.Kinds,
		"description": "Only memories of this kind: stored (added with memory_add or acolyte remember), observation " +
			"(distilled from past tasks), rule (a rule from AGENTS.md, CLAUDE.md or GEMINI.md), seed (curated in .acolyte/seeds.json)."}
	return props
}

func hitSchema(withScore, withStale bool, scopes []memory.Scope) obj {
	props := obj{
		"id":      str("Stable id; pass it to memory_remove."),
		"content": str("The fact itself."),
		"scope":   obj{"type": "string", "enum": scopes, "description": "Where the memory lives."},
		"kind":    obj{"type": "string", "enum": memory.Kinds, "description": "How the memory came to be."},
		"topic":   str("Short label the memory was filed under, if any; a rule's section headings, outermost first, as \"testing / unit tests\"."),
		"source":  str("Who added it: cli, agent, mcp, distill, or the file and heading of a rule."),
		"globs": obj{"type": "array", "items": obj{"type": "string"},
			"description": "The files the memory applies to, as globs from the repository root (** is every file); absent when it applies wherever its meaning does."},
	}
	if withScore {
		props["score"] = obj{"type": "number", "description": "Relevance; higher is better. Compare within one result only."}
	}
	if withStale {
		paths := obj{"type": "array", "items": obj{"type": "string"}}
		props["stale"] = obj{"type": "object", "properties": obj{"changed": paths, "deleted": paths},
			"description": "Present when files the memory cites changed or were deleted since it was written: verify it against the code before relying on it, then memory_update or memory_remove it."}
	}
	return obj{"type": "object", "properties": props, "required": []string{"id", "content", "scope", "kind"}}
}

func hitsSchema(withCursor bool, scopes []memory.Scope) json.RawMessage {
	props := obj{
		"memories": obj{"type": "array", "items": hitSchema(!withCursor, !withCursor, scopes), "description": "The memories found, best first."},
		"note":     str("Why the result is empty, and what to try instead."),
	}
	if !withCursor {
		props["note"] = str("Why the result is empty and what to try instead, or what to do about stale hits.")
	}
	if slices.Contains(scopes, memory.ScopeTeam) {
		props["team"] = str("Present when team memories are missing from this answer, and why (the team database was down or slow).")
	}
	if withCursor {
		props["memories"] = obj{"type": "array", "items": hitSchema(false, false, scopes), "description": "One page of memories, oldest first."}
		props["nextCursor"] = str("Present when more memories match: call memory_list again with the same filters and cursor set to this.")
	}
	return schema(props, "memories")
}

// staleNote is what memory_search tells the model when a hit is stale.
const staleNote = "A hit with stale cites files changed since it was written: verify it against the code " +
	"before relying on it, then memory_update or memory_remove it."

func memorySearch(tk memory.Toolkit, stale memory.StaleFunc) Tool {
	return Tool{
		Name:        "memory_search",
		Summary:     "search long-term memory (rules, conventions, past observations, user preferences)",
		Description: "Search long-term memory: AGENTS.md rules, conventions, commands, past lessons, user preferences.",
		Schema: schema(filterProps(obj{
			"query": strMax("What to look for, in words or a question, e.g. \"how do I run the integration tests\". "+
				"Give query, queries, or both.", maxQueryBytes),
			"queries": obj{"type": "array", "maxItems": maxQueries,
				"items":       obj{"type": "string", "maxLength": maxQueryBytes},
				"description": "Several topics searched at once, their results merged; use it instead of several calls."},
			"limit": limitProp(defaultSearchLimit, maxSearchLimit),
			"paths": obj{"type": "array", "maxItems": memory.MaxQueryPaths,
				"items": obj{"type": "string", "maxLength": memory.MaxQueryPathBytes},
				"description": "The files at hand, relative to the repository root, e.g. [\"migrations/0042_add_email.sql\"]: " +
					"memories scoped to paths that match one rank first and are returned whatever the query's words, " +
					"with those that apply to every file."},
			"only_path": obj{"type": "boolean",
				"description": "Keep only the memories scoped to paths that match one of paths (and those that apply to every file)."},
		}, memory.ScopesOf(tk))),
		Output: hitsSchema(false, memory.ScopesOf(tk)),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Query   string   `json:"query"`
				Queries []string `json:"queries"`
				Scope   string   `json:"scope"`
				Kind    string   `json:"kind"`
				Limit   *int     `json:"limit"`
				Paths   []string `json:"paths"`
				Only    bool     `json:"only_path"`
			}
			if err := decodeText(raw, &a); err != nil {
				return nil, err
			}
			if err := checkQuery("query", a.Query); err != nil {
				return nil, err
			}
			if len(a.Queries) > maxQueries {
				return nil, fieldErrorf("queries", "%d queries, the limit is %d; search for the rest in another call", len(a.Queries), maxQueries)
			}
			q := memory.Query{Text: strings.TrimSpace(a.Query)}
			for i, s := range a.Queries {
				if err := checkQuery(fmt.Sprintf("queries[%d]", i), s); err != nil {
					return nil, err
				}
				if s = strings.TrimSpace(s); s != "" {
					q.Queries = append(q.Queries, s)
				}
			}
			if q.Text == "" && len(q.Queries) == 0 {
				return nil, fieldErrorf("query", "give a query (or queries) saying what to look for")
			}
			f, err := parseFilter(memory.ScopesOf(tk), a.Scope, a.Kind, "", a.Limit, defaultSearchLimit, maxSearchLimit)
			if err != nil {
				return nil, err
			}
			q.Filter = f
			q.Paths, q.OnlyPath = a.Paths, a.Only
			if err := q.CheckPaths(); err != nil {
				return nil, fieldErrorf("paths", "%v", err)
			}
			ctx, teamLeftOut := team.Note(ctx)
			results, err := tk.Search(ctx, q)
			if err != nil {
				return nil, err
			}
			// Without git's answer the hits still stand, unmarked; a
			// canceled call fails below anyway.
			_ = memory.MarkStale(ctx, results, stale)
			out := MemoryHits{Memories: make([]MemoryHit, 0, len(results)), Team: teamLeftOut()}
			for _, r := range results {
				h := hit(r.Memory, r.Score)
				h.Stale = r.Stale
				out.Memories = append(out.Memories, h)
				if h.Stale != nil {
					// Said where it applies, not in every prompt.
					out.Note = staleNote
				}
			}
			if len(out.Memories) == 0 {
				// The store answers nothing when nothing is relevant, rather
				// than its least bad guesses.
				out.Note = emptyNote(f, "no memory matches; try other words, or read the code")
			}
			return out, nil
		},
	}
}

func memoryAdd(tk memory.Toolkit, source string) Tool {
	return Tool{
		Name:    "memory_add",
		Summary: "remember one fact for future tasks",
		Description: "Remember one durable, self-contained fact: a convention, a command, a decision and why, " +
			"a preference. No secrets.",
		Schema: schema(obj{
			"content": strMax(fmt.Sprintf("The fact, self-contained and specific, at most %d bytes of UTF-8: "+
				"one fact per memory.", memory.MaxContentBytes), memory.MaxContentBytes),
			"scope": obj{"type": "string", "enum": durableScopes(memory.ScopesOf(tk)), "default": memory.DefaultScope(tk),
				"description": scopeHelp(addScopeHelp(tk), memory.ScopesOf(tk))},
			"topic": strMax(fmt.Sprintf("Optional short single-line label to file it under, e.g. \"testing\"; at most %d bytes.",
				maxTopicBytes), maxTopicBytes),
		}, "content"),
		Output: schema(obj{
			"id":       str("The new memory's id, or the existing one's when existing is true."),
			"scope":    obj{"type": "string", "enum": durableScopes(memory.ScopesOf(tk)), "description": "Where it was stored."},
			"existing": obj{"type": "boolean", "description": "True when the same fact was already stored, so nothing was written."},
			"warning":  str("Set when the memory was stored but could not be embedded yet; it is still found by its words."),
			"similar": obj{"type": "array", "maxItems": maxSimilar, "items": hitSchema(true, false, memory.ScopesOf(tk)),
				"description": "Stored memories close to the new one, nearest first. If one says the same thing or the opposite, " +
					"update it with memory_update, or remove the stale one with memory_remove, rather than keep both."},
			"note": str("Present with similar: what to do about them."),
		}, "id", "scope"),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Content string `json:"content"`
				Scope   string `json:"scope"`
				Topic   string `json:"topic"`
			}
			if err := decodeText(raw, &a); err != nil {
				return nil, err
			}
			scope := memory.DefaultScope(tk)
			if a.Scope != "" {
				s, err := memory.ParseScopeIn(a.Scope, memory.ScopesOf(tk))
				if err != nil {
					return nil, fieldErrorf("scope", "%v", err)
				}
				scope = s
			}
			if scope == memory.ScopeSession {
				return nil, fieldErrorf("scope", "memory_add stores durable facts: use scope %s", joinScopes(durableScopes(memory.ScopesOf(tk))))
			}
			if err := memory.ValidateContent(a.Content); err != nil {
				return nil, fieldErrorf("content", "%v", err)
			}
			topic := strings.TrimSpace(a.Topic)
			if err := checkTopic(topic); err != nil {
				return nil, err
			}
			added, err := tk.Add(ctx, memory.Draft{
				Content: strings.TrimSpace(a.Content),
				Scope:   scope,
				Kind:    memory.KindStored,
				Topic:   topic,
				Source:  source,
			})
			switch {
			case errors.Is(err, memory.ErrSecret):
				// gitsync names the kind of secret and never the text.
				return nil, errorf(CodeSecret, "%v", err)
			case errors.Is(err, memory.ErrInvalidText), errors.Is(err, memory.ErrTooLarge), errors.Is(err, memory.ErrEmpty):
				return nil, errorf(CodeInvalidArgs, "%v", err)
			case err != nil:
				return nil, err
			}
			out := MemoryAdded{ID: added.Memory.ID, Scope: string(added.Memory.Scope),
				Existing: added.Existing, Warning: added.Warning}
			if !added.Existing {
				out.Similar = similar(ctx, tk, added.Memory)
			}
			if len(out.Similar) > 0 {
				out.Note = similarNote
			}
			return out, nil
		},
	}
}

func memoryRemove(tk memory.Toolkit) Tool {
	return Tool{
		Name:        "memory_remove",
		Summary:     "delete by id",
		Description: "Delete wrong or outdated memories by id (or ids) from memory_search.",
		Schema: schema(obj{
			"id":  str("The id of the memory to delete, as memory_search or memory_list returned it."),
			"ids": idsProp("The ids of the memories to delete: all are, or none when one cannot be."),
		}),
		Output: schema(obj{
			"removed": obj{"type": "array", "items": hitSchema(false, false, memory.ScopesOf(tk)), "description": "The memories deleted."},
		}, "removed"),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				ID  string   `json:"id"`
				IDs []string `json:"ids"`
			}
			if err := decodeText(raw, &a); err != nil {
				return nil, err
			}
			ids, err := takeIDs(a.ID, a.IDs, "remove")
			if err != nil {
				return nil, err
			}
			removed, err := tk.Remove(ctx, ids...)
			if err != nil {
				return nil, editError(ctx, tk, ids, err)
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
		Name:    "memory_list",
		Summary: "list by scope, kind, topic",
		Description: "List memories by scope, kind or topic, without a query, oldest first, one page at a time: " +
			"when the result has nextCursor, call again with the same filters and cursor set to it for the next page.",
		Schema: schema(filterProps(obj{
			"topic":  strMax("Only memories filed under this topic or beneath it: \"testing\" also lists \"testing / unit tests\".", maxTopicBytes),
			"limit":  limitProp(defaultListLimit, maxListLimit),
			"cursor": str("nextCursor from the previous page; omit it for the first page."),
		}, memory.ScopesOf(tk))),
		Output: hitsSchema(true, memory.ScopesOf(tk)),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Scope  string `json:"scope"`
				Kind   string `json:"kind"`
				Topic  string `json:"topic"`
				Limit  *int   `json:"limit"`
				Cursor string `json:"cursor"`
			}
			if err := decodeText(raw, &a); err != nil {
				return nil, err
			}
			if err := checkTopic(strings.TrimSpace(a.Topic)); err != nil {
				return nil, err
			}
			f, err := parseFilter(memory.ScopesOf(tk), a.Scope, a.Kind, a.Topic, a.Limit, defaultListLimit, maxListLimit)
			if err != nil {
				return nil, err
			}
			var after *listCursor
			if a.Cursor != "" {
				if after, err = decodeCursor(a.Cursor, f); err != nil {
					return nil, err
				}
			}
			ctx, teamLeftOut := team.Note(ctx)
			page, next, err := listPage(ctx, tk, f, after)
			if err != nil {
				return nil, err
			}
			out := MemoryHits{Memories: make([]MemoryHit, 0, len(page)), NextCursor: next, Team: teamLeftOut()}
			for _, m := range page {
				out.Memories = append(out.Memories, hit(m, 0))
			}
			if len(out.Memories) == 0 {
				out.Note = emptyNote(f, "no memories match these filters")
			}
			return out, nil
		},
	}
}

// emptyNote explains an empty result. An empty session scope usually means
// no session id, which more searching cannot fix.
func emptyNote(f memory.Filter, note string) string {
	if f.Scope == memory.ScopeSession {
		return note + "; session memories exist only when acolyte was started with a session id (--session or ACOLYTE_SESSION)"
	}
	return note
}

// listCursor is where the previous page of a listing ended: the last memory's
// position and its sort key, in the store's order (created_at, id). The key
// finds the place again when memories before it were removed since; the
// filter makes a cursor useless with other filters, as MCP's cursors are.
type listCursor struct {
	Offset  int    `json:"o"`
	Created int64  `json:"t"`
	ID      string `json:"i"`
	Filter  string `json:"f"`
}

func filterKey(f memory.Filter) string {
	return string(f.Scope) + "\x00" + string(f.Kind) + "\x00" + f.Topic
}

func encodeCursor(c listCursor) string {
	b, _ := json.Marshal(c) // ints and strings always marshal
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, f memory.Filter) (*listCursor, error) {
	var c listCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.Offset < 1 || c.ID == "" {
		return nil, fieldErrorf("cursor", "not a nextCursor from memory_list; omit cursor to start from the first page")
	}
	if c.Filter != filterKey(f) {
		return nil, fieldErrorf("cursor", "this cursor belongs to a listing with other scope, kind or topic; repeat those filters, or omit cursor to start again")
	}
	return &c, nil
}

// listPage returns the page of f.Limit memories after the cursor, and the
// cursor of the page after it ("" when this is the last). Pages are read by
// offset, which costs the memories before the page; a listing is read a
// page at a time by a model, so the sum stays small next to what it reads.
func listPage(ctx context.Context, tk memory.Toolkit, f memory.Filter, after *listCursor) ([]memory.Memory, string, error) {
	limit := f.Limit
	start := 0
	if after != nil {
		start = after.Offset
	}
	f.Limit = start + limit + 1 // one more, to know whether another page follows
	mems, err := tk.List(ctx, f)
	if err != nil {
		return nil, "", err
	}
	if after != nil && (start > len(mems) || mems[start-1].ID != after.ID) {
		// Memories before the cursor changed since the last page: find the
		// first one after its key in the whole listing.
		f.Limit = 0
		if mems, err = tk.List(ctx, f); err != nil {
			return nil, "", err
		}
		start = len(mems)
		for i, m := range mems {
			if t := m.CreatedAt.UnixNano(); t > after.Created || t == after.Created && m.ID > after.ID {
				start = i
				break
			}
		}
	}
	page := mems[start:min(start+limit, len(mems))]
	if start+limit >= len(mems) {
		return page, "", nil
	}
	last := page[len(page)-1]
	return page, encodeCursor(listCursor{Offset: start + len(page), Created: last.CreatedAt.UnixNano(),
		ID: last.ID, Filter: filterKey(f)}), nil
}

func parseFilter(scopes []memory.Scope, scope, kind, topic string, limit *int, def, max int) (memory.Filter, error) {
	f := memory.Filter{Topic: strings.TrimSpace(topic), Limit: def}
	if scope != "" {
		s, err := memory.ParseScopeIn(scope, scopes)
		if err != nil {
			return f, fieldErrorf("scope", "%v", err)
		}
		f.Scope = s
	}
	if kind != "" {
		k, err := memory.ParseKind(kind)
		if err != nil {
			return f, fieldErrorf("kind", "%v", err)
		}
		f.Kind = k
	}
	if limit != nil {
		if *limit < 1 || *limit > max {
			return f, fieldErrorf("limit", "must be between 1 and %d, got %d; omit it for %d", max, *limit, def)
		}
		f.Limit = *limit
	}
	return f, nil
}

// fieldErrorf is an invalid_arguments error that names the argument at
// fault, so the model knows which one to change.
func fieldErrorf(field, format string, args ...any) *Error {
	return errorf(CodeInvalidArgs, "%s: %s", field, fmt.Sprintf(format, args...))
}

func checkQuery(field, q string) error {
	switch {
	case strings.IndexByte(q, 0) >= 0:
		return fieldErrorf(field, "contains NUL bytes; search with text")
	case len(q) > maxQueryBytes:
		return fieldErrorf(field, "%d bytes, the limit is %d; search with the few words that matter", len(q), maxQueryBytes)
	}
	return nil
}

func checkTopic(topic string) error {
	switch {
	case strings.ContainsAny(topic, "\x00\r\n"):
		return fieldErrorf("topic", "must be a single line of text")
	case len(topic) > maxTopicBytes:
		return fieldErrorf("topic", "%d bytes, the limit is %d; give a short label such as \"testing\"", len(topic), maxTopicBytes)
	}
	return nil
}

// decodeText is decodeArgs for arguments that carry text. encoding/json
// would turn invalid UTF-8, and escaped lone surrogates, into U+FFFD without
// a word; the CLI refuses such text, so the tools refuse it too, naming the
// argument, before decoding.
func decodeText(raw json.RawMessage, v any) error {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) == nil {
		names := make([]string, 0, len(fields))
		for name := range fields {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if !validJSONText(fields[name]) {
				return fieldErrorf(name, "is not valid UTF-8 text; re-encode it as UTF-8")
			}
		}
	}
	return decodeArgs(raw, v)
}

// validJSONText reports whether the JSON value b decodes to valid UTF-8: its
// bytes are UTF-8 and every \u escape of a surrogate is one of a pair.
func validJSONText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++
		if i >= len(b) || b[i] != 'u' {
			continue // an escaped character, or malformed JSON decodeArgs reports
		}
		r, ok := hex4(b[i+1:])
		if !ok {
			continue
		}
		i += 4
		switch {
		case r >= 0xDC00 && r < 0xE000:
			return false
		case r >= 0xD800 && r < 0xDC00:
			if i+2 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
				if r2, ok := hex4(b[i+3:]); ok && r2 >= 0xDC00 && r2 < 0xE000 {
					i += 6
					continue
				}
			}
			return false
		}
	}
	return true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
