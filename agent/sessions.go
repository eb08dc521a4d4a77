package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// DefaultSessionMaxAge is how long an agent session's memories are kept
// after the session was last used. A week covers picking a task up again
// after a weekend; what matters longer than that belongs in project or
// user scope, which distill is asked to choose for lasting facts.
const DefaultSessionMaxAge = 7 * 24 * time.Hour

// State keys of the agent's session bookkeeping in the store.
const (
	// LastSessionKey holds the id of the most recent agent session, which
	// `acolyte list --scope session` shows when no --session is given.
	LastSessionKey = "agent.last_session"
	sessionsKey    = "agent.sessions"
)

// NewSessionID names a new agent session.
func NewSessionID(now time.Time) string { return "session-" + memory.NewID(now) }

// Sessions records which agent sessions exist and when each was last used,
// so their memories can be pruned when they go stale: session memories are
// visible only to their own session, so nothing else would ever clean them.
type Sessions struct {
	Store SessionStore
}

// SessionStore is what Sessions needs of the local store (memory/sqlite's
// Store): bookkeeping values, and replacing a session's memories with none.
type SessionStore interface {
	ReplaceScope(ctx context.Context, scope memory.Scope, key string, ms []memory.Memory) (memory.ReplaceStats, error)
	GetState(ctx context.Context, key string) (string, error)
	SetState(ctx context.Context, key, value string) error
}

// Touch records that session id is in use now and makes it the last one.
func (ss Sessions) Touch(ctx context.Context, id string, now time.Time) error {
	seen, err := ss.load(ctx)
	if err != nil {
		return err
	}
	seen[id] = now.Unix()
	if err := ss.save(ctx, seen); err != nil {
		return err
	}
	return ss.Store.SetState(ctx, LastSessionKey, id)
}

// Prune removes the memories of every recorded session last used before
// now-maxAge, except keep, and forgets those sessions. It returns the ids
// of the sessions pruned.
func (ss Sessions) Prune(ctx context.Context, maxAge time.Duration, keep string, now time.Time) ([]string, error) {
	seen, err := ss.load(ctx)
	if err != nil {
		return nil, err
	}
	cutoff := now.Add(-maxAge).Unix()
	var pruned []string
	for id, last := range seen {
		if id == keep || last >= cutoff {
			continue
		}
		if _, err := ss.Store.ReplaceScope(ctx, memory.ScopeSession, id, nil); err != nil {
			return pruned, fmt.Errorf("prune session %s: %w", id, err)
		}
		delete(seen, id)
		pruned = append(pruned, id)
	}
	sort.Strings(pruned)
	if len(pruned) == 0 {
		return nil, nil
	}
	return pruned, ss.save(ctx, seen)
}

func (ss Sessions) load(ctx context.Context) (map[string]int64, error) {
	raw, err := ss.Store.GetState(ctx, sessionsKey)
	if err != nil {
		return nil, err
	}
	seen := map[string]int64{}
	if raw != "" {
		// A damaged record loses only the pruning of old sessions.
		_ = json.Unmarshal([]byte(raw), &seen)
	}
	return seen, nil
}

func (ss Sessions) save(ctx context.Context, seen map[string]int64) error {
	b, _ := json.Marshal(seen) // a map of strings to numbers always marshals
	return ss.Store.SetState(ctx, sessionsKey, string(b))
}
