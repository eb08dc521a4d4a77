package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acolyte-dev/acolyte/memory/team"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/memory"
)

// CodeDerived is the code of a change refused because the memory is derived
// from a file (a rule from AGENTS.md, a seed from .acolyte/seeds.json): the
// message names the file to edit instead.
const CodeDerived = "derived_memory"

// maxIDs bounds the ids one memory_get or memory_remove takes, as a page of
// memory_search results is bounded.
const maxIDs = maxSearchLimit

// maxSimilar is how many near memories memory_add returns at most.
const maxSimilar = 3

const similarNote = "similar holds stored memories close to this one. If one says the same thing, or something " +
	"this new fact contradicts, call memory_update on it (and memory_remove this one), or memory_remove the stale one, " +
	"so that memory does not hold two answers."

// MemoryGot is the result of memory_get.
type MemoryGot struct {
	Memories []MemoryHit `json:"memories"`
	// Missing are the ids asked for that no visible memory has.
	Missing []string `json:"missing,omitempty"`
}

// MemoryUpdated is the result of memory_update.
type MemoryUpdated struct {
	Memory MemoryHit `json:"memory"`
}

func idsProp(description string) obj {
	return obj{"type": "array", "maxItems": maxIDs, "items": obj{"type": "string"},
		"description": fmt.Sprintf("%s At most %d; give id instead for one.", description, maxIDs)}
}

// takeIDs merges the id and ids arguments, trimmed and without repeats.
func takeIDs(id string, ids []string, verb string) ([]string, error) {
	all := slices.Clone(ids)
	if strings.TrimSpace(id) != "" {
		all = append([]string{id}, all...)
	}
	out := make([]string, 0, len(all))
	for _, s := range all {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	switch {
	case len(out) == 0:
		return nil, fieldErrorf("id", "give the id of the memory to %s (from memory_search), or ids for several", verb)
	case len(out) > maxIDs:
		return nil, fieldErrorf("ids", "%d ids, the limit is %d; %s the rest in another call", len(out), maxIDs, verb)
	}
	return out, nil
}

// visibleByID finds the memories with these ids among those visible
// through tk. A Toolkit has no lookup by id, so this lists what is
// visible: it runs for memory_get, which a model calls for a few ids it
// just saw, and on the error path of a change.
func visibleByID(ctx context.Context, tk memory.Toolkit, ids []string) (map[string]memory.Memory, error) {
	ctx, _ = team.Note(ctx)
	mems, err := tk.List(ctx, memory.Filter{})
	if err != nil {
		return nil, err
	}
	found := make(map[string]memory.Memory, len(ids))
	for _, m := range mems {
		if slices.Contains(ids, m.ID) {
			found[m.ID] = m
		}
	}
	return found, nil
}

// derived reports whether m comes from a file, which is where it is
// changed: a rule from AGENTS.md (or CLAUDE.md, GEMINI.md), or a seed.
func derived(m memory.Memory) bool {
	return m.Scope == memory.ScopeProject && (m.Kind == memory.KindRule || m.Kind == memory.KindSeed)
}

// editError gives a failed update or removal of ids its code: the ids no
// memory has, a derived memory with the file to edit, a secret, bad text.
func editError(ctx context.Context, tk memory.Toolkit, ids []string, err error) error {
	switch {
	case errors.Is(err, memory.ErrSecret):
		return errorf(CodeSecret, "%v", err)
	case errors.Is(err, memory.ErrInvalidText), errors.Is(err, memory.ErrTooLarge), errors.Is(err, memory.ErrEmpty):
		return errorf(CodeInvalidArgs, "%v", err)
	}
	found, lookErr := visibleByID(ctx, tk, ids)
	if lookErr != nil {
		return err
	}
	var missing []string
	for _, id := range ids {
		m, ok := found[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		if derived(m) {
			// The store's refusal names the file and heading it comes from.
			return errorf(CodeDerived, "%v", err)
		}
	}
	if len(missing) > 0 || errors.Is(err, memory.ErrNotFound) {
		if len(missing) == 0 {
			missing = ids
		}
		return errorf(CodeNotFound, "no memory has id %s; nothing was changed; search again for the current ids",
			strings.Join(quoteAll(missing), ", "))
	}
	return err
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func memoryGet(tk memory.Toolkit) Tool {
	return Tool{
		Name:    "memory_get",
		Summary: "read by id",
		Description: "Read memories by id, whole, with their scope, kind, topic and source: id for one, ids for several. " +
			"Ids come from memory_search, memory_list or memory_add.",
		Schema: schema(obj{
			"id":  str("The id of the memory to read."),
			"ids": idsProp("The ids of the memories to read."),
		}),
		Output: schema(obj{
			"memories": obj{"type": "array", "items": hitSchema(false, false, memory.ScopesOf(tk)), "description": "The memories found, in the order asked."},
			"missing":  obj{"type": "array", "items": obj{"type": "string"}, "description": "Ids asked for that no memory visible here has."},
		}, "memories"),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				ID  string   `json:"id"`
				IDs []string `json:"ids"`
			}
			if err := decodeText(raw, &a); err != nil {
				return nil, err
			}
			ids, err := takeIDs(a.ID, a.IDs, "read")
			if err != nil {
				return nil, err
			}
			found, err := visibleByID(ctx, tk, ids)
			if err != nil {
				return nil, err
			}
			out := MemoryGot{Memories: make([]MemoryHit, 0, len(ids))}
			for _, id := range ids {
				if m, ok := found[id]; ok {
					out.Memories = append(out.Memories, hit(m, 0))
				} else {
					out.Missing = append(out.Missing, id)
				}
			}
			if len(out.Memories) == 0 {
				return nil, errorf(CodeNotFound, "no memory has id %s; search again for the current ids", strings.Join(quoteAll(ids), ", "))
			}
			return out, nil
		},
	}
}

func memoryUpdate(tk memory.Toolkit) Tool {
	return Tool{
		Name:    "memory_update",
		Summary: "fix one in place",
		Description: "Replace the content of a memory, and its topic if given, keeping its id and scope: use it when a fact " +
			"changed, rather than adding a second memory that contradicts the first. Rules and seeds come from files " +
			"(AGENTS.md, .acolyte/seeds.json) and are changed there.",
		Schema: schema(obj{
			"id": str("The id of the memory to change, from memory_search, memory_list or memory_add."),
			"content": strMax(fmt.Sprintf("The whole new fact, at most %d bytes of UTF-8; it replaces the old content.",
				memory.MaxContentBytes), memory.MaxContentBytes),
			"topic": strMax("A new topic; omit it to keep the one the memory has.", maxTopicBytes),
		}, "id", "content"),
		Output: schema(obj{
			"memory": hitSchema(false, false, memory.ScopesOf(tk)),
		}, "memory"),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				ID      string `json:"id"`
				Content string `json:"content"`
				Topic   string `json:"topic"`
			}
			if err := decodeText(raw, &a); err != nil {
				return nil, err
			}
			id := strings.TrimSpace(a.ID)
			if id == "" {
				return nil, fieldErrorf("id", "give the id of the memory to change (from memory_search)")
			}
			if err := memory.ValidateContent(a.Content); err != nil {
				return nil, fieldErrorf("content", "%v", err)
			}
			topic := strings.TrimSpace(a.Topic)
			if err := checkTopic(topic); err != nil {
				return nil, err
			}
			m, err := tk.Edit(ctx, id, memory.Revision{Content: a.Content, Topic: topic})
			if err != nil {
				return nil, editError(ctx, tk, []string{id}, err)
			}
			return MemoryUpdated{Memory: hit(m, 0)}, nil
		},
	}
}

// similar returns the stored memories nearest m, for memory_add to show.
// It is best effort: m is stored already, and a failed search must not
// turn that success into an error.
func similar(ctx context.Context, tk memory.Toolkit, m memory.Memory) []MemoryHit {
	ctx, _ = team.Note(ctx)
	// Near: a duplicate shares the fact's rare words and lies close in
	// vector space, which spares the search the postings of its common
	// words (at 100k memories most of what memory_add cost).
	results, err := tk.Search(ctx, memory.Query{Text: m.Content, Near: true, Filter: memory.Filter{Limit: maxSimilar + 1}})
	if err != nil {
		return nil
	}
	var out []MemoryHit
	for _, r := range results {
		if r.ID != m.ID && len(out) < maxSimilar {
			out = append(out, hit(r.Memory, r.Score))
		}
	}
	return out
}

// addScopeHelp describes memory_add's scopes, the default first.
func addScopeHelp(tk memory.Toolkit) string {
	if memory.DefaultScope(tk) == memory.ScopeProject {
		return "project (default): shared with everyone who clones the repository, through " +
			".acolyte/memories.jsonl; user: private to this user, in every project."
	}
	return "user (default, since no repository is open here): private to this user, in every project. " +
		"project is not offered outside a repository."
}

func joinScopes(scopes []memory.Scope) string {
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	return strings.Join(names, " or ")
}
