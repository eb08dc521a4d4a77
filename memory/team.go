package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

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

// WithTeam is the Toolkit of a caller with a team database: team memories
// go to and come from Team, everything else from Local, and a search or
// listing without a scope sees both.
type WithTeam struct {
	Local Toolkit
	Team  TeamEngine
	// Visibility names the team (Visibility.Team) and must match the one
	// Local was opened with for the other scopes.
	Visibility
	// Refuse is the credential check every team write passes first, over
	// every field of the memory: a team memory is read by everyone on the
	// team, so a secret must never reach it. It returns the error that
	// refuses the memory, nil to allow it. memory imports none of our
	// packages, so the caller supplies the detector (cmd wires
	// gitsync.RefuseSecret); a nil Refuse refuses every team write rather
	// than let one through unchecked.
	Refuse Guard
	// TeamWait bounds the team side of a search or listing that reads the
	// local stores too (no scope given): past it the team's results are
	// left out rather than hold up the local ones. Zero: no bound.
	TeamWait time.Duration
	// Pacer, when set, chooses that bound for each call in TeamWait's
	// place and is told how the call went, so the bound follows how long
	// the team database takes to answer (see TeamPace).
	Pacer TeamPacer
	// Warn, when set, is told why the team side of such a search or
	// listing failed, and the local results are returned alone: a team
	// database that is down or slow must not take local memory with it.
	// When nil the failure fails the call.
	Warn func(error)
}

// teamSide runs f on the team database beside the caller's local work,
// bounded by TeamWait, or by what Pacer says when set; wait returns its answer, or, when Warn is set, nil
// for a failure, which it reports. stop abandons it.
func teamSide[T any](ctx context.Context, t WithTeam, what string, f func(context.Context) (T, error)) (wait func() (T, error), stop func()) {
	bound := t.TeamWait
	if t.Pacer != nil {
		bound = t.Pacer.Wait()
	}
	cancel := func() {}
	if bound > 0 {
		ctx, cancel = context.WithTimeout(ctx, bound)
	}
	type answer struct {
		v    T
		err  error
		took time.Duration
	}
	ch := make(chan answer, 1)
	start := time.Now()
	go func() {
		v, err := f(ctx)
		ch <- answer{v, err, time.Since(start)}
	}()
	return func() (T, error) {
		defer cancel()
		a := <-ch
		if a.err == nil {
			if t.Pacer != nil {
				t.Pacer.Answered(a.took)
			}
			return a.v, nil
		}
		var zero T
		err := fmt.Errorf("%s: %w", what, a.err)
		// The bound may surface first as the driver's own deadline (a
		// socket deadline set from ctx's), before ctx itself reports it.
		ranOut := ctx.Err() != nil || errors.Is(a.err, context.DeadlineExceeded) || (bound > 0 && a.took >= bound)
		if ranOut {
			err = fmt.Errorf("%s: %w (waited %s): %w", what, ErrTeamSlow, bound, a.err)
			if t.Pacer != nil {
				t.Pacer.LeftOut(bound)
			}
		}
		if t.Warn == nil {
			return zero, err
		}
		t.Warn(err)
		if n, ok := ctx.Value(teamNoteKey{}).(*teamNote); ok {
			n.set(err)
		}
		return zero, nil
	}, cancel
}

// TeamPacer chooses how long the team side of a search or listing may
// take, and learns from each: cmd's keeps a TeamPace in the local store,
// so that each short-lived command starts from what the last ones saw.
type TeamPacer interface {
	Wait() time.Duration
	Answered(took time.Duration)
	LeftOut(waited time.Duration)
}

// teamNoteKey marks a context whose caller wants to hear, beside the
// results, that the team side of a call was left out (see NoteTeam).
type teamNoteKey struct{}

// teamNote holds why the team side of one call was left out.
type teamNote struct {
	mu  sync.Mutex
	why string
}

func (n *teamNote) set(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.why = err.Error()
}

func (n *teamNote) get() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.why
}

// NoteTeam returns a context for one search or listing through WithTeam,
// and a function that says afterwards why its team side was left out ("":
// it was not). Warn still reports it; this is for callers whose answer
// has a place for it, such as the MCP and agent tools, whose user never
// sees stderr.
func NoteTeam(ctx context.Context) (context.Context, func() string) {
	n := &teamNote{}
	return context.WithValue(ctx, teamNoteKey{}, n), n.get
}

// both runs local and team together, for a search or listing without a
// scope, and returns local's answer followed by team's: the call costs the
// slower of the two, not their sum, and team's side is bounded and may be
// left out as teamSide says.
func both[T any](ctx context.Context, t WithTeam, what string, local, team func(context.Context) ([]T, error)) ([]T, error) {
	wait, stop := teamSide(ctx, t, what, team)
	mine, err := local(ctx)
	if err != nil {
		stop()
		return nil, err
	}
	theirs, err := wait()
	if err != nil {
		return nil, err
	}
	return append(mine, theirs...), nil
}

func (t WithTeam) refuse(m Memory) error {
	if t.Refuse == nil {
		return errors.New("team memory: no credential check is configured, so nothing is shared")
	}
	return t.Refuse(m)
}

// RefuseSecret checks m with the guard of the side that would store it.
func (t WithTeam) RefuseSecret(m Memory) error {
	if m.Scope == ScopeTeam {
		return t.refuse(m)
	}
	if g, ok := t.Local.(Guarded); ok {
		return g.RefuseSecret(m)
	}
	return nil
}

// Search searches the team database for scope team, the local stores for
// any other scope, and both without a scope: the two result lists are
// merged by score, since each engine scores in [0, 1] by the same fusion.
func (t WithTeam) Search(ctx context.Context, q Query) ([]Result, error) {
	switch q.Scope {
	case ScopeTeam:
		return t.Team.Search(ctx, t.Visibility, q)
	case "":
	default:
		return t.Local.Search(ctx, q)
	}
	out, err := both(ctx, t, "team search",
		func(ctx context.Context) ([]Result, error) { return t.Local.Search(ctx, q) },
		func(ctx context.Context) ([]Result, error) { return t.Team.Search(ctx, t.Visibility, q) })
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b Result) int { return cmp.Compare(b.Score, a.Score) })
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	out = out[:min(len(out), limit, MaxLimit)]
	// Each side cut its own tail; the other side's best may lie far above
	// this one's.
	return out[:AboveTail(q, len(out), func(i int) float64 { return out[i].Score })], nil
}

// Add stores a team draft in the team database after the credential check,
// and any other draft locally.
func (t WithTeam) Add(ctx context.Context, d Draft) (Added, error) {
	if d.Scope != ScopeTeam {
		return t.Local.Add(ctx, d)
	}
	if err := ValidateContent(d.Content); err != nil {
		return Added{}, err
	}
	if err := t.refuse(d.Memory()); err != nil {
		return Added{}, err
	}
	return t.Team.Add(ctx, t.Visibility, d)
}

// Remove deletes memories by id from whichever side holds them, all or
// none: an id neither side holds removes nothing anywhere, and the error
// names it. The team's ids are deleted in a transaction that commits only
// after the local side removed its ids (the local side refuses the whole
// call when one is unknown), so neither side is left half done; the one
// gap left is a commit that fails after the local removal, which the
// error then says.
func (t WithTeam) Remove(ctx context.Context, ids ...string) ([]Memory, error) {
	var teamIDs, localIDs []string
	for _, id := range ids {
		_, err := t.Team.Get(ctx, t.Visibility, id)
		switch {
		case err == nil:
			teamIDs = append(teamIDs, id)
		case errors.Is(err, ErrNotFound):
			localIDs = append(localIDs, id)
		default:
			// The team database cannot say; when the local side holds
			// every id they are all local (ids are unique everywhere),
			// and the local side removes all or none.
			local, localErr := t.Local.Remove(ctx, ids...)
			if localErr == nil {
				return local, nil
			}
			if !errors.Is(localErr, ErrNotFound) {
				return nil, localErr
			}
			return nil, fmt.Errorf("team forget: %s is not a local memory, and the team database could not be asked whether it holds it: %w; nothing was removed, try again when it answers", id, err)
		}
	}
	if len(teamIDs) == 0 {
		return t.Local.Remove(ctx, localIDs...)
	}
	var (
		local    []Memory
		localErr error
		called   bool
	)
	team, err := t.Team.DeleteThen(ctx, t.Visibility, teamIDs, func() error {
		called = true
		if len(localIDs) == 0 {
			return nil
		}
		local, localErr = t.Local.Remove(ctx, localIDs...)
		return localErr
	})
	switch {
	case localErr != nil:
		return nil, localErr // the team's transaction rolled back
	case err != nil && called && len(localIDs) > 0:
		return local, fmt.Errorf("team forget: the local memories %s were removed, but removing the team's failed: %w", strings.Join(localIDs, ", "), err)
	case err != nil:
		return nil, fmt.Errorf("team forget: %w", err)
	}
	return append(local, team...), nil
}

// List lists the team database for scope team, the local stores for any
// other scope, and both without a scope, oldest first.
func (t WithTeam) List(ctx context.Context, f Filter) ([]Memory, error) {
	switch f.Scope {
	case ScopeTeam:
		return t.Team.List(ctx, t.Visibility, f)
	case "":
	default:
		return t.Local.List(ctx, f)
	}
	out, err := both(ctx, t, "team list",
		func(ctx context.Context) ([]Memory, error) { return t.Local.List(ctx, f) },
		func(ctx context.Context) ([]Memory, error) { return t.Team.List(ctx, t.Visibility, f) })
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b Memory) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Edit revises a team memory in the team database, after the credential
// check, and any other memory locally.
func (t WithTeam) Edit(ctx context.Context, id string, r Revision) (Memory, error) {
	m, err := t.Team.Get(ctx, t.Visibility, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return t.Local.Edit(ctx, id, r)
	case err != nil:
		return Memory{}, fmt.Errorf("team edit: %w", err)
	}
	if err := ValidateContent(r.Content); err != nil {
		return Memory{}, err
	}
	if err := t.refuse(r.Revised(m)); err != nil {
		return Memory{}, err
	}
	return t.Team.Edit(ctx, t.Visibility, id, r)
}

// ScopesOf lists the scopes tk stores and finds, in the order of Scopes:
// team only when tk reaches a team database, and project only inside a
// repository (a Scoped toolkit without a project key is outside any), so a
// tool never offers a model a scope that can only fail.
func ScopesOf(tk Toolkit) []Scope {
	team := false
	if t, ok := tk.(WithTeam); ok {
		team, tk = true, t.Local
	}
	if c, ok := tk.(Checked); ok {
		tk = c.Toolkit
	}
	project := true
	if s, ok := tk.(Scoped); ok && s.ProjectKey == "" {
		project = false
	}
	return slices.DeleteFunc(slices.Clone(Scopes), func(s Scope) bool {
		return s == ScopeTeam && !team || s == ScopeProject && !project
	})
}

// DefaultScope is where a memory goes when its author names no scope: the
// repository's project memory inside one, the user's own outside any. The
// CLI's remember, the agent's and the MCP server's memory_add all agree.
func DefaultScope(tk Toolkit) Scope {
	if slices.Contains(ScopesOf(tk), ScopeProject) {
		return ScopeProject
	}
	return ScopeUser
}

// ParseScopeIn is ParseScope limited to the scopes offered.
func ParseScopeIn(s string, offered []Scope) (Scope, error) {
	if slices.Contains(offered, Scope(s)) {
		return Scope(s), nil
	}
	return "", fmt.Errorf("%w %q: use one of %s", ErrUnknownScope, s, joinNames(offered))
}
