// Package pgtest starts a real, private PostgreSQL server for tests: initdb
// into a temporary directory, listening only on a Unix socket there, run as
// an unprivileged user when the tests run as root (postgres refuses root).
package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// RequireEnv, when set to 1, turns a missing PostgreSQL into a failure
// instead of a skip; CI sets it so the team tests never silently vanish.
const RequireEnv = "ACOLYTE_REQUIRE_POSTGRES"

// Server is a running test server.
type Server struct {
	dir  string // holds the socket
	dbs  atomic.Int64
	user *user.User // who the server runs as; nil for the current user
}

// bin finds a PostgreSQL server program: on PATH, or where Debian's
// packages put it.
func bin(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	sort.Strings(found)
	if len(found) == 0 {
		return "", false
	}
	return found[len(found)-1], true
}

// Available says whether Start can start a server here, or must fail
// because CI requires one: false means it would skip.
func Available() bool {
	_, ok1 := bin("initdb")
	_, ok2 := bin("pg_ctl")
	return (ok1 && ok2) || os.Getenv(RequireEnv) == "1"
}

// Start starts a server that lives until tb's cleanup.
func Start(tb testing.TB) *Server {
	tb.Helper()
	initdb, ok1 := bin("initdb")
	pgctl, ok2 := bin("pg_ctl")
	if !ok1 || !ok2 {
		msg := "no PostgreSQL server (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin; install it (apt-get install postgresql) to run the team database tests"
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	s := &Server{}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			tb.Fatalf("postgres refuses to run as root and there is no user nobody to run it as: %v", err)
		}
		s.user = u
	}
	// Not t.TempDir: its parent is private to root, and the server's user
	// must reach the directory. The socket path must also stay short.
	dir, err := os.MkdirTemp("", "pg")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	s.dir = dir
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		tb.Fatal(err)
	}
	if s.user != nil {
		uid, _ := strconv.Atoi(s.user.Uid)
		gid, _ := strconv.Atoi(s.user.Gid)
		for _, p := range []string{dir, data} {
			if err := os.Chown(p, uid, gid); err != nil {
				tb.Fatal(err)
			}
		}
	}
	s.run(tb, initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync")
	s.run(tb, pgctl, "start", "-w", "-D", data, "-l", filepath.Join(dir, "log"),
		"-o", "-c listen_addresses='' -k "+dir+" -c fsync=off -c full_page_writes=off -c synchronous_commit=off")
	tb.Cleanup(func() {
		cmd := s.cmd(pgctl, "stop", "-m", "immediate", "-D", data)
		_ = cmd.Run()
	})
	return s
}

func (s *Server) cmd(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if s.user != nil {
		runAs(cmd, s.user)
		cmd.Dir = s.dir
	}
	return cmd
}

func (s *Server) run(tb testing.TB, name string, args ...string) {
	tb.Helper()
	out, err := s.cmd(name, args...).CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		tb.Fatalf("%s %s: %v\n%s\n%s", filepath.Base(name), strings.Join(args, " "), err, out, log)
	}
}

// URL is the connection string of database db as role user.
func (s *Server) URL(user, db string) string {
	return fmt.Sprintf("postgres:///%s?host=%s&user=%s&sslmode=disable", db, s.dir, user)
}

// Admin runs statements as the superuser in database db.
func (s *Server) Admin(tb testing.TB, db string, sqls ...string) {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL("postgres", db))
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range sqls {
		if _, err := conn.Exec(ctx, q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
}

// NewDatabase creates an empty database and returns its name.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d", s.dbs.Add(1))
	s.Admin(tb, "postgres", "CREATE DATABASE "+name)
	return name
}
