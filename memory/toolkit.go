package memory

import "context"

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
	Topic string
	Limit int
}

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
}

// Result is one memory returned by a search, with its fused score.
type Result struct {
	Memory
	Score float64 `json:"score"`
}

// Draft is a memory someone asked to add; the toolkit fills in the rest.
type Draft struct {
	Content string
	Scope   Scope
	Kind    Kind
	Topic   string
	Source  string
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
// gitsync.Workspace, which also keeps .acolyte/ in step for project memories.
type Toolkit interface {
	Search(ctx context.Context, q Query) ([]Result, error)
	Add(ctx context.Context, d Draft) (Added, error)
	Remove(ctx context.Context, ids ...string) ([]Memory, error)
	List(ctx context.Context, f Filter) ([]Memory, error)
	Edit(ctx context.Context, id string, r Revision) (Memory, error)
}

// Revision is a change to a stored memory: new content, and a new topic
// when Topic is not empty.
type Revision struct {
	Content string
	Topic   string
}
