package pgtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// PGliteEnv turns on the tests on PGlite, PostgreSQL 17 in WASM with
// pgvector, the only pgvector this machine image has (Debian 12 packages
// none). Its value is 1 for the server in memory/postgres/testdata/pglite,
// or the path of a folder holding server.mjs and its node_modules. The
// npm packages must be installed there first:
//
//	cd memory/postgres/testdata/pglite && npm ci --legacy-peer-deps
const PGliteEnv = "ACOLYTE_PGLITE"

// pgliteStartTimeout bounds the server's start: loading the WASM
// PostgreSQL takes about 2 s on an idle machine.
const pgliteStartTimeout = 90 * time.Second

// pgliteDir is the folder of server.mjs, from the variable.
func pgliteDir() (string, bool) {
	v := os.Getenv(PGliteEnv)
	switch v {
	case "":
		return "", false
	case "1":
		// The tests of several packages start it, each from its own
		// folder: find the server from this file, which sits two
		// folders below the module's root.
		_, file, _, _ := runtime.Caller(0)
		return filepath.Join(filepath.Dir(file), "..", "..", "memory", "postgres", "testdata", "pglite"), true
	}
	return v, true
}

// PGliteAvailable says whether StartPGlite would start a server, or fail
// because CI requires one: false means it would skip.
func PGliteAvailable() bool {
	_, ok := pgliteDir()
	return ok || os.Getenv(RequireEnv) == "1"
}

// StartPGlite starts a PGlite server with pgvector that lives until tb's
// cleanup, and returns its URL. The server is one PostgreSQL session: it
// serves one connection at a time (a second waits for the first to
// close, or fails after connect_timeout, 10 s), so the URL limits a
// pgxpool to one (pool_max_conns=1; postgres.Init strips it for its
// single connection, and so must a test's own pgx.Connect). Every user
// name is the superuser and any password works, so roles and row-level
// security are tested on the Debian server (Start), not here.
func StartPGlite(tb testing.TB) string {
	tb.Helper()
	dir, ok := pgliteDir()
	if !ok {
		msg := PGliteEnv + " is not set: set it to 1 to run the tests on PGlite with pgvector (first: cd memory/postgres/testdata/pglite && npm ci --legacy-peer-deps)"
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Fatalf("%s is set but there is no node on PATH: install Node.js 18 or later, or unset %s", PGliteEnv, PGliteEnv)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@electric-sql", "pglite-socket")); err != nil {
		tb.Fatalf("%s is set but the PGlite packages are not installed in %s: run npm ci --legacy-peer-deps there", PGliteEnv, dir)
	}
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = dir
	// The server exits when its stdin closes: at cleanup, or when this
	// process dies without one.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start the PGlite server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	ports := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		ports <- strings.TrimSpace(line)
		// Nothing else is written there; drain it so the server never
		// blocks on a full pipe.
		_, _ = io.Copy(io.Discard, r)
	}()
	var port int
	select {
	case line := <-ports:
		port, err = strconv.Atoi(line)
		if err != nil || port <= 0 {
			// It exited: let its stderr arrive before showing it.
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
			}
			tb.Fatalf("the PGlite server printed %q, want its port\n%s", line, stderr.String())
		}
	case <-time.After(pgliteStartTimeout):
		tb.Fatalf("the PGlite server did not print its port within %v\n%s", pgliteStartTimeout, stderr.String())
	}
	// connect_timeout: a second connection opened while one is open
	// waits for it, and would wait forever if the first is never closed
	// (a test holding a Store while it connects for something else);
	// with a timeout that mistake is an error.
	return fmt.Sprintf("postgres://postgres:pglite@127.0.0.1:%d/postgres?sslmode=disable&pool_max_conns=1&connect_timeout=10", port)
}

// syncBuffer collects the server's stderr, written by exec's copier and
// read by the test when the server fails.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
