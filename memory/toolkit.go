package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Visibility is where a caller stands: which project and session it is in.
// Search and List only ever return memories visible from here: the caller's
// own session, its own project, and every user memory.
type Visibility struct {
	ProjectKey string
	SessionKey string
	// Team names the caller's team; only a team engine reads it.
	Team string
}

// Filter narrows a listing or a search. Zero fields do not filter.
type Filter struct {
	Scope Scope
	Kind  Kind
	// Topic keeps the memories filed under this topic or beneath it in
	// its path: "testing" keeps "testing / unit tests" but not "testing
	// tools". Engines apply it in SQL, with TopicPrefix.
	Topic string
	Limit int
}

// Admits reports whether f keeps m, as the engines apply f in their
// queries (Limit aside), for a caller already holding the memories: acolyte
// ui lists every visible memory once per page and narrows them here.
func (f Filter) Admits(m Memory) bool {
	return (f.Scope == "" || m.Scope == f.Scope) && (f.Kind == "" || m.Kind == f.Kind) &&
		(f.Topic == "" || m.Topic == f.Topic || strings.HasPrefix(m.Topic, TopicPrefix(f.Topic)))
}

// TopicSeparator joins the parts of a topic path: the AGENTS.md import
// files a rule under its section headings, outermost first ("testing /
// unit tests").
const TopicSeparator = " / "

// MaxTopicBytes is the longest topic a memory may have.
const MaxTopicBytes = 64

// TopicPrefix is what the topics beneath the topic filter begin with.
func TopicPrefix(filter string) string { return filter + TopicSeparator }

// Query is a search request. Several Queries are searched together and their
// results merged, which lets an agent ask for two things in one call.
type Query struct {
	Text    string
	Queries []string
	Filter
	// Method picks the evidence weighed; the zero value fuses both sides.
	Method Method
	// NoFloor returns the best matches even when none is relevant (see
	// relevanceFloor), for benchmarks that measure what the floor costs.
	NoFloor bool
	// Paths are the files at hand, slash-separated and relative to the
	// repository root: memories whose globs match one of them rank above
	// others (see pathFloor), and OnlyPath keeps only those.
	Paths    []string
	OnlyPath bool
	// Near asks for the memories nearest Text rather than a ranked
	// answer: what memory_add shows beside a fact it just stored, so that
	// the agent sees a duplicate or a contradiction. An engine may leave
	// out what costs it much and tells little about a near memory, such
	// as the words that a large share of its memories hold.
	Near bool
}

// Result is one memory returned by a search, with its fused score.
type Result struct {
	Memory
	Score float64 `json:"score"`
	// Vectors is the embedding model whose vectors ranked a local
	// memory beside its words, "" when words alone did: a layered
	// embedder's instant model until every memory the search saw had the
	// model's. The team store, whose vectors are all the model's, leaves
	// it "".
	Vectors string `json:"vectors,omitempty"`
	// Stale says which files the memory cites changed or went since the
	// commit it was written at; nil when none did, or nobody asked (see
	// MarkStale).
	Stale *Staleness `json:"stale,omitempty"`
}

// Draft is a memory someone asked to add; the toolkit fills in the rest.
type Draft struct {
	Content string
	Scope   Scope
	Kind    Kind
	Topic   string
	Source  string
	// Globs scope the memory to the files they match (Memory.Globs).
	Globs []string
	// AllowSecret stores a user memory even when it looks like a
	// credential, because the user said so (`remember --allow-secret`).
	// It is ignored in every other scope, whose memories others read, and
	// no tool a model drives sets it.
	AllowSecret bool
}

// Memory is the draft as a memory, with the fields a guard checks.
func (d Draft) Memory() Memory {
	return Memory{Scope: d.Scope, Kind: d.Kind, Content: d.Content, Topic: d.Topic, Source: d.Source, Globs: d.Globs}
}

// SecretAllowed reports whether d may hold a credential: only a user
// memory the user explicitly allowed.
func (d Draft) SecretAllowed() bool { return d.AllowSecret && d.Scope == ScopeUser }

// A Guard refuses a memory before it is stored, with an error that is
// ErrSecret to errors.Is and never repeats what it refused. memory imports
// none of our packages, so the caller supplies it (cmd wires
// gitsync.RefuseSecret).
type Guard func(m Memory) error

// Guarded is a Toolkit that refuses secrets, and lets a caller ask before
// it reports a text it could not store: distill withholds a refused fact's
// text by asking Guard, whatever else refused the fact.
type Guarded interface {
	RefuseSecret(m Memory) error
}

// Added reports the outcome of Toolkit.Add.
type Added struct {
	Memory Memory
	// Existing is true when the content was already stored in that scope, in
	// which case Memory is the existing one and nothing was written.
	Existing bool
	// Warning is set when the memory was stored but could not be embedded
	// (offline, rate limited); `acolyte reindex` completes it later.
	Warning string
}

// Toolkit is the memory surface that the CLI, the agent and the MCP server
// all drive. Memory-only callers use Scoped; callers inside a repository use
// gitsync.Checkout, which also keeps .acolyte/ in step for project memories.
type Toolkit interface {
	Search(ctx context.Context, q Query) ([]Result, error)
	Add(ctx context.Context, d Draft) (Added, error)
	Remove(ctx context.Context, ids ...string) ([]Memory, error)
	List(ctx context.Context, f Filter) ([]Memory, error)
	Edit(ctx context.Context, id string, r Revision) (Memory, error)
}

// Revision is a change to a stored memory: new content, a new topic when
// Topic is not empty, and new globs when SetGlobs.
type Revision struct {
	Content string
	Topic   string
	// SetGlobs replaces the memory's globs with Globs (none when Globs is
	// empty); without it the globs stay as they are.
	SetGlobs bool
	Globs    []string
	// AllowSecret is Draft.AllowSecret for an edit: honoured for a user
	// memory only.
	AllowSecret bool
}

// Revised is m with r's texts, for a guard to check before the edit is
// stored.
func (r Revision) Revised(m Memory) Memory {
	m.Content = strings.TrimSpace(r.Content)
	if t := strings.TrimSpace(r.Topic); t != "" {
		m.Topic = t
	}
	if r.SetGlobs {
		m.Globs = NormalizeGlobs(r.Globs)
	}
	return m
}

// Apply returns m revised by r at time now, validated as Add validates.
// Its updated time moves past the one it had, even when the clock stepped
// back or two edits fall in one millisecond, so that when two copies of
// the memory meet in a merge, the later edit wins (see gitsync/format.Merge).
func (r Revision) Apply(m Memory, now time.Time) (Memory, error) {
	if err := ValidateContent(r.Content); err != nil {
		return Memory{}, err
	}
	if r.SetGlobs {
		if err := ValidateGlobs(r.Globs); err != nil {
			return Memory{}, err
		}
	}
	m = r.Revised(m)
	prev := m.UpdatedAt
	m.UpdatedAt = now.UTC().Truncate(time.Millisecond)
	if !m.UpdatedAt.After(prev) {
		m.UpdatedAt = prev.Add(time.Millisecond)
	}
	m.Tokens = EstimateTokens(m.Content)
	if err := m.Validate(); err != nil {
		return Memory{}, err
	}
	return m, nil
}

// Texts are the query's non-blank texts, each checked as memory content
// is: every engine's search starts from them.
func (q Query) Texts() ([]string, error) {
	texts := make([]string, 0, 1+len(q.Queries))
	for _, t := range append([]string{q.Text}, q.Queries...) {
		if strings.TrimSpace(t) != "" {
			texts = append(texts, t)
		}
	}
	if len(texts) == 0 {
		return nil, errors.New("search: the query is empty; say what to look for")
	}
	for _, t := range texts {
		if err := ValidateContent(t); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	if err := q.CheckPaths(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return texts, nil
}

// Limits of a path-scoped search: the files an agent has open, not a
// listing of the repository.
const (
	MaxQueryPaths     = 32
	MaxQueryPathBytes = 1024
)

// CheckPaths checks the files a search names (Paths, OnlyPath), as Texts
// checks its texts; Texts calls it.
func (q Query) CheckPaths() error {
	if q.OnlyPath && len(q.Paths) == 0 {
		return errors.New("keeping only path-scoped memories needs the files at hand; name them (--path FILE, a tool's paths)")
	}
	if len(q.Paths) > MaxQueryPaths {
		return fmt.Errorf("%d paths, the limit is %d; name the files at hand, not the repository", len(q.Paths), MaxQueryPaths)
	}
	for _, p := range q.Paths {
		switch {
		case !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			return errors.New("a path must be one line of UTF-8 text without control characters")
		case len(p) > MaxQueryPathBytes:
			return fmt.Errorf("a path of %d bytes, the limit is %d", len(p), MaxQueryPathBytes)
		case strings.TrimSpace(p) == "":
			return errors.New("an empty path; name a file relative to the repository root")
		case strings.HasPrefix(p, "/") || p == ".." || strings.HasPrefix(p, "../"):
			return fmt.Errorf("path %q is not inside the repository; name files relative to its root, as src/app.go", p)
		}
	}
	return nil
}

// Checked is a Toolkit whose writes first pass Check. A local store
// refuses every write to a damaged database itself, but a project memory
// is written to .acolyte/ before the store: Check (the store's
// CheckWritable) refuses it before anything is written, so a refused
// write has changed nothing (issue 37).
type Checked struct {
	Toolkit
	Check func(ctx context.Context) error
}

// Scopes implements ScopeLister: the scopes of the toolkit it checks.
func (c Checked) Scopes() []Scope { return ScopesOf(c.Toolkit) }

// Add implements Toolkit.
func (c Checked) Add(ctx context.Context, d Draft) (Added, error) {
	if err := c.Check(ctx); err != nil {
		return Added{}, err
	}
	return c.Toolkit.Add(ctx, d)
}

// Remove implements Toolkit.
func (c Checked) Remove(ctx context.Context, ids ...string) ([]Memory, error) {
	if err := c.Check(ctx); err != nil {
		return nil, err
	}
	return c.Toolkit.Remove(ctx, ids...)
}

// Edit implements Toolkit.
func (c Checked) Edit(ctx context.Context, id string, r Revision) (Memory, error) {
	if err := c.Check(ctx); err != nil {
		return Memory{}, err
	}
	return c.Toolkit.Edit(ctx, id, r)
}

// RefuseSecret is the wrapped Toolkit's guard. Without one it refuses, so
// that a caller asking whether a text may be shown withholds it, as it
// would without a guard to ask.
func (c Checked) RefuseSecret(m Memory) error {
	if g, ok := c.Toolkit.(Guarded); ok {
		return g.RefuseSecret(m)
	}
	return fmt.Errorf("%w: no guard to check it with", ErrSecret)
}
