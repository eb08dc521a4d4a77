package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// slack is what a bounded call may take past its bound: scheduling on a
// busy machine, and the close of the connection it gave up on.
const slack = 2 * time.Second

// Every call through Remote ends within its bound, whatever the network
// does: stalled, slowed to seconds per packet, or the server gone; and the
// server's lock timeout ends a lock wait before the client's bound does.
func TestRemoteBoundsEveryCall(t *testing.T) {
	c := start(t)
	db := c.database(t)
	p := c.srv.Proxy(t)
	r := postgres.NewRemote(p.URL("alice", db), nil, 0)
	t.Cleanup(r.Close)
	ctx := t.Context()
	vis := memory.Visibility{Team: "red"}
	team := memory.Draft{Scope: memory.ScopeTeam, Content: "staging is reached through bastion-2"}
	if _, err := r.Add(ctx, vis, team); err != nil {
		t.Fatal(err)
	}
	search := func() error {
		_, err := r.Search(ctx, vis, memory.Query{Text: "bastion", Filter: memory.Filter{Scope: memory.ScopeTeam}})
		return err
	}
	within := func(what string, bound time.Duration, call func() error) error {
		t.Helper()
		start := time.Now()
		err := call()
		if took := time.Since(start); took > bound+slack {
			t.Errorf("%s took %v, past its bound %v", what, took.Round(time.Millisecond), bound)
		}
		return err
	}

	p.Stall(true)
	if err := within("a search on a stalled network", postgres.CallTimeout, search); err == nil {
		t.Error("a search on a stalled network succeeded")
	} else if !strings.Contains(err.Error(), "slow") {
		t.Errorf("the error does not say the database is slow: %v", err)
	}
	p.Stall(false)

	p.Drop()
	p.Delay(2 * time.Second)
	if err := within("a remember at 2 s per packet", postgres.CallTimeout, func() error {
		_, err := r.Add(ctx, vis, memory.Draft{Scope: memory.ScopeTeam, Content: "the VPN drops idle sessions after an hour"})
		return err
	}); err == nil {
		t.Error("a remember at 2 s per packet finished within the bound; the proxy did not slow it")
	}
	p.Delay(0)

	// A member holding the table's lock: the server gives up waiting at
	// lock_timeout, before the client's bound.
	lock, err := pgx.Connect(ctx, c.srv.URL("postgres", db))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close(context.Background())
	tx, err := lock.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE team_memories IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	p.Drop()
	var pgErr *pgconn.PgError
	waitForServer(t, search, func(err error) bool { return errors.As(err, &pgErr) })
	err = within("a search behind a held lock", 2*time.Second, search)
	if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
		t.Errorf("a search behind a held lock: %v; want the server's lock timeout (55P03)", err)
	} else if !strings.Contains(err.Error(), "lock another session holds on the team's tables") || !strings.Contains(err.Error(), "pg_terminate_backend") {
		t.Errorf("a search behind a held lock does not say what it waited for, or how to end it: %v", err)
	}
	tx.Rollback(ctx)

	// The server goes down and comes back: the same Remote, as a
	// long-lived process holds it, answers again.
	p.Refuse(true)
	p.Drop()
	if err := within("a search with the server down", postgres.CallTimeout, search); err == nil {
		t.Error("a search with the server down succeeded")
	}
	p.Refuse(false)
	waitForServer(t, search, func(err error) bool { return err == nil })
}

// Before a server that is down at startup: the first call fails, and once
// it is up a later call connects, so a long-lived process (the MCP server)
// gains the team scope it could not have at startup.
func TestRemoteConnectsWhenTheServerComesUp(t *testing.T) {
	c := start(t)
	db := c.database(t)
	p := c.srv.Proxy(t)
	p.Refuse(true)
	r := postgres.NewRemote(p.URL("alice", db), nil, 0)
	t.Cleanup(r.Close)
	vis := memory.Visibility{Team: "red"}
	if _, err := r.List(t.Context(), vis, memory.Filter{Scope: memory.ScopeTeam}); err == nil {
		t.Fatal("listing with the server down succeeded")
	}
	p.Refuse(false)
	waitForServer(t, func() error {
		_, err := r.Add(t.Context(), vis, memory.Draft{Scope: memory.ScopeTeam, Content: "deploys freeze on Fridays"})
		return err
	}, func(err error) bool { return err == nil })
}

// A Remote that no call uses never connects.
func TestRemoteConnectsOnlyWhenCalled(t *testing.T) {
	c := start(t)
	p := c.srv.Proxy(t)
	r := postgres.NewRemote(p.URL("alice", c.database(t)), nil, time.Second)
	r.Close()
	if n := p.Accepted(); n != 0 {
		t.Fatalf("%d connections without a call", n)
	}
}

// waitForServer retries call until done says its error is the one awaited,
// for up to a few retry periods: a dropped connection fails the first call
// that finds it, and a failed connection is retried after a pause.
func waitForServer(t *testing.T, call func() error, done func(error) bool) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = call(); done(err) {
			return
		}
	}
	t.Fatalf("the call never got the awaited answer; last: %v", err)
}
