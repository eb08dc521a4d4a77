package memory

import "context"

// Engine is what a memory database does, whichever engine it runs on: the
// local SQLite Store and the shared team database (memory/postgres) both
// implement it, and one conformance suite (memory/internal/enginetest) holds them
// to the same behaviour. Each method sees only what vis may see.
type Engine interface {
	Add(ctx context.Context, vis Visibility, d Draft) (Added, error)
	Get(ctx context.Context, vis Visibility, id string) (Memory, error)
	Delete(ctx context.Context, vis Visibility, ids ...string) ([]Memory, error)
	List(ctx context.Context, vis Visibility, f Filter) ([]Memory, error)
	Search(ctx context.Context, vis Visibility, q Query) ([]Result, error)
}

// LocalEngine is the local store (memory/sqlite): an Engine that can also
// revise a memory and store it back under its id, which is how Scoped
// edits and how gitsync keeps the index in step with the memories file.
type LocalEngine interface {
	Engine
	// Revise applies r to m, moving its updated time past the one it had.
	Revise(m Memory, r Revision) (Memory, error)
	// Put stores m under its id, replacing any memory with that id.
	Put(ctx context.Context, m Memory) (Added, error)
}

// ReplaceStats counts what replacing the memories of one scope and key
// changed: how an import of a .acolyte/ file reports (memory/sqlite's
// Store.ReplaceScope, used by gitsync and by the agent's session pruning).
type ReplaceStats struct {
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Removed   int `json:"removed"`
	Unchanged int `json:"unchanged"`
	// Warning is set when some memories could not be embedded.
	Warning string `json:"warning,omitempty"`
	// Revised lists the memories that kept their updated time while their
	// content or topic changed: what a hand edit of a .acolyte/ file looks
	// like, which gitsync stamps. A change of case or spacing alone is one.
	Revised []string `json:"-"`
	// Written lists the memories added or updated, for what follows a
	// write of them (gitsync keeps their cited files' blob ids).
	Written []string `json:"-"`
}

// TeamEngine is the team database: an Engine that can also revise a memory
// in place (the local store's edits go through Scoped or gitsync instead).
type TeamEngine interface {
	Engine
	Edit(ctx context.Context, vis Visibility, id string, r Revision) (Memory, error)
	// DeleteThen removes ids as Delete does, in a transaction that it
	// commits only when then returns nil: what a caller removes elsewhere
	// in the same act (the local side of a forget) succeeds or fails with
	// it. then runs once every id was found.
	DeleteThen(ctx context.Context, vis Visibility, ids []string, then func() error) ([]Memory, error)
}
