package memory

import (
	"context"
	"math"
	"slices"
)

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

// MarkStale sets Stale on the results stale names, and puts fresh results
// before stale ones among equals (FreshFirstAmongEquals). Only a memory
// with a commit and paths can be stale, so only those are asked about: a
// search whose results cite nothing costs stale nothing. A nil stale
// marks none.
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
	FreshFirstAmongEquals(results, func(r Result) float64 { return r.Score }, func(r Result) bool { return r.Stale != nil })
	return nil
}

// equalScores is how far apart, relative to the larger, two results'
// scores may lie and still be equal. Both engines round a result's score
// to four decimals, as every road shows it, so scores a user sees as
// equal are equal floats, or differ by a float's rounding (1e-16
// relative) where a score is computed otherwise; 1e-9 is far below the
// least step a rounded score takes (1e-4).
const equalScores = 1e-9

// FreshFirstAmongEquals moves, within each run of items best first whose
// scores are equal (within equalScores of the run's first), the fresh
// ones before the stale ones, each in its order: a stale memory may
// describe code no longer there, so of two that answer alike the fresh
// one is the safer to read first. No score changes, and no item passes
// one that scores otherwise.
func FreshFirstAmongEquals[T any](items []T, score func(T) float64, stale func(T) bool) {
	for start := 0; start < len(items); {
		end := start + 1
		first := score(items[start])
		for end < len(items) && math.Abs(score(items[end])-first) <= equalScores*math.Max(math.Abs(first), math.Abs(score(items[end]))) {
			end++
		}
		run := items[start:end]
		if end-start > 1 && slices.ContainsFunc(run, stale) {
			slices.SortStableFunc(run, func(a, b T) int {
				switch sa, sb := stale(a), stale(b); {
				case sa == sb:
					return 0
				case sb:
					return -1
				default:
					return 1
				}
			})
		}
		start = end
	}
}
