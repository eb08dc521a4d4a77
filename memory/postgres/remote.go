package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/acolyte-dev/acolyte/memory"
)

// Bounds on every call to the team database. A network that stalls or a
// server that is frozen or locked must cost a command seconds, never the
// minutes TCP retransmission or a blocked lock can take; CONTRIBUTING.md
// ("Team memory") documents them.
const (
	// CallTimeout bounds one call (one Engine method: its connection, its
	// queries and its transaction) on the client side.
	CallTimeout = 5 * time.Second
	// statementTimeout and lockTimeout are the server's own bounds, set on
	// every connection unless the URL sets them: a statement the client
	// gave up on stops running, and a lock wait gives up before the call
	// does, with an error that says so.
	statementTimeout = "5s"
	lockTimeout      = "2s"
	// retryAfter is how long after a failed connection the next call fails
	// at once with the same error instead of trying again: a long-lived
	// process (the MCP server) whose database is down answers promptly,
	// and tries again once this has passed.
	retryAfter = time.Second
)

// Remote is the team database as a command or a long-lived process uses
// it. It connects on first use, not when opened, so a command that never
// touches the team scope (a hook, a project remember) never waits for the
// database; after a failed connection a later call tries again, so a
// long-lived process regains team scope when the database comes back; and
// every call runs under CallTimeout and, when set, the command's deadline.
type Remote struct {
	url      string
	embedder memory.Embedder
	// deadline, when not zero, bounds every call of a one-shot command as
	// a whole, however many calls it makes.
	deadline time.Time

	mu       sync.Mutex
	store    *Store
	lastErr  error
	failedAt time.Time
}

var _ memory.TeamEngine = (*Remote)(nil)

// NewRemote returns the team database at url, not yet connected. A budget
// above zero bounds all calls together (a CLI command); zero leaves only
// CallTimeout (a long-lived process).
func NewRemote(url string, e memory.Embedder, budget time.Duration) *Remote {
	r := &Remote{url: url, embedder: e}
	if budget > 0 {
		r.deadline = time.Now().Add(budget)
	}
	return r
}

// Close closes the connection, if one was made.
func (r *Remote) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store != nil {
		r.store.Close()
		r.store = nil
	}
}

// call bounds ctx for one call and connects when not yet connected.
func (r *Remote) call(ctx context.Context) (*Store, context.Context, context.CancelFunc, error) {
	ctx, cancelCall := context.WithTimeout(ctx, CallTimeout)
	cancel := cancelCall
	if !r.deadline.IsZero() {
		var cancelCommand context.CancelFunc
		ctx, cancelCommand = context.WithDeadline(ctx, r.deadline)
		cancel = func() { cancelCommand(); cancelCall() }
	}
	s, err := r.connect(ctx)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return s, ctx, cancel, nil
}

func (r *Remote) connect(ctx context.Context) (*Store, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store != nil {
		return r.store, nil
	}
	if r.lastErr != nil && time.Since(r.failedAt) < retryAfter {
		return nil, r.lastErr
	}
	s, err := Open(ctx, r.url, r.embedder)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (gave up within the call's bound of at most %s: the team database or the network to it is slow)", err, CallTimeout)
		}
		r.lastErr, r.failedAt = err, time.Now()
		return nil, err
	}
	r.store, r.lastErr = s, nil
	return s, nil
}

// ErrConnectionLost is a team call whose connection closed before the
// answer: the server stopped, restarted or was killed, or the network
// dropped.
var ErrConnectionLost = errors.New("the team database closed the connection before answering")

// bounded explains an error of a call that ran out of time, or lost its
// connection, which pgx reports as a bare "unexpected EOF".
func bounded(ctx context.Context, what string, err error) error {
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%s: %w (no answer within the call's bound of at most %s; the team database or the network to it is slow)", what, err, CallTimeout)
	}
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "55P03": // lock_not_available: lock_timeout passed
			return fmt.Errorf("%s: %w (waited %s, the lock timeout, for a lock another session holds on the team's tables; "+
				"an administrator finds it with `SELECT pid, usename, mode, relation::regclass FROM pg_locks JOIN pg_stat_activity USING (pid) WHERE relation::regclass::text LIKE 'team_%%'` "+
				"and ends it with `SELECT pg_terminate_backend(pid)`)", what, err, lockTimeout)
		case "57014": // query_canceled: statement_timeout passed
			return fmt.Errorf("%s: %w (the team database stopped the statement at its timeout of %s: it is overloaded, or waits on another session)", what, err, statementTimeout)
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w (its server stopped, restarted or was killed, or the network dropped: %w); a write in flight is rolled back unless it had committed, so look with acolyte list --scope team before retrying", what, ErrConnectionLost, err)
	}
	return err
}

func (r *Remote) Add(ctx context.Context, vis memory.Visibility, d memory.Draft) (memory.Added, error) {
	s, ctx, cancel, err := r.call(ctx)
	if err != nil {
		return memory.Added{}, err
	}
	defer cancel()
	out, err := s.Add(ctx, vis, d)
	return out, bounded(ctx, "team remember", err)
}

func (r *Remote) Get(ctx context.Context, vis memory.Visibility, id string) (memory.Memory, error) {
	s, ctx, cancel, err := r.call(ctx)
	if err != nil {
		return memory.Memory{}, err
	}
	defer cancel()
	out, err := s.Get(ctx, vis, id)
	return out, bounded(ctx, "team lookup", err)
}

func (r *Remote) Delete(ctx context.Context, vis memory.Visibility, ids ...string) ([]memory.Memory, error) {
	s, ctx, cancel, err := r.call(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	out, err := s.Delete(ctx, vis, ids...)
	return out, bounded(ctx, "team forget", err)
}

func (r *Remote) DeleteThen(ctx context.Context, vis memory.Visibility, ids []string, then func() error) ([]memory.Memory, error) {
	s, ctx, cancel, err := r.call(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	out, err := s.DeleteThen(ctx, vis, ids, then)
	return out, bounded(ctx, "team forget", err)
}

func (r *Remote) List(ctx context.Context, vis memory.Visibility, f memory.Filter) ([]memory.Memory, error) {
	s, ctx, cancel, err := r.call(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	out, err := s.List(ctx, vis, f)
	return out, bounded(ctx, "team list", err)
}

func (r *Remote) Search(ctx context.Context, vis memory.Visibility, q memory.Query) ([]memory.Result, error) {
	s, ctx, cancel, err := r.call(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	out, err := s.Search(ctx, vis, q)
	return out, bounded(ctx, "team search", err)
}

func (r *Remote) Edit(ctx context.Context, vis memory.Visibility, id string, rev memory.Revision) (memory.Memory, error) {
	s, ctx, cancel, err := r.call(ctx)
	if err != nil {
		return memory.Memory{}, err
	}
	defer cancel()
	out, err := s.Edit(ctx, vis, id, rev)
	return out, bounded(ctx, "team edit", err)
}

// Counts is Store.Counts, bounded.
func (r *Remote) Counts(ctx context.Context, vis memory.Visibility) (map[memory.Kind]int, error) {
	s, ctx, cancel, err := r.call(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	out, err := s.Counts(ctx, vis)
	return out, bounded(ctx, "team counts", err)
}
