package memory

import "context"

// Staleness is what changed of the paths a memory cites (Memory.Paths)
// since the commit it was written at (Memory.Commit): such a memory may
// describe code that is no longer there.
type Staleness struct {
	Changed []string `json:"changed,omitempty"`
	Deleted []string `json:"deleted,omitempty"`
}

// StaleFunc says, by id, which of mems cite files that changed or went
// since they were written, and leaves the others out. Only git knows, so
// whoever holds the repository passes one in (cmd hands gitsync's).
type StaleFunc func(ctx context.Context, mems []Memory) (map[string]Staleness, error)

// MarkStale sets Stale on the results stale names. Only a memory with a
// commit and paths can be stale, so only those are asked about: a search
// whose results cite nothing costs stale nothing. A nil stale marks none.
func MarkStale(ctx context.Context, results []Result, stale StaleFunc) error {
	if stale == nil {
		return nil
	}
	var ask []Memory
	for _, r := range results {
		if r.Commit != "" && len(r.Paths) > 0 {
			ask = append(ask, r.Memory)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	found, err := stale(ctx, ask)
	if err != nil {
		return err
	}
	for i := range results {
		if s, ok := found[results[i].ID]; ok && len(s.Changed)+len(s.Deleted) > 0 {
			results[i].Stale = &s
		}
	}
	return nil
}
