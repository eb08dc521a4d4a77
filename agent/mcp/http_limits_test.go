package mcp_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acolyte-dev/acolyte/agent/mcp"
	"github.com/acolyte-dev/acolyte/memory"
)

// limitedServer serves a real store over a loopback listener with the
// bounds of opts, as acolyte mcp --http does, and returns its address.
func limitedServer(t *testing.T, opts mcp.HTTPOptions) string {
	t.Helper()
	store := openStore(t, filepath.Join(t.TempDir(), "index.db"))
	t.Cleanup(func() { store.Close() })
	srv := mcp.NewHost(memory.Scoped{Store: store}, mcp.Options{}).HTTPServer(opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// closedWithin says whether the server closes conn within d: a read
// returns EOF or a reset, not a timeout.
func closedWithin(conn net.Conn, r *bufio.Reader, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	return err == nil || !(errors.As(err, &ne) && ne.Timeout())
}

// A keep-alive connection that sends no further request is closed (issue
// 35: 200 of 200 were still open after 15 s).
func TestIdleKeepAliveConnectionsAreClosed(t *testing.T) {
	addr := limitedServer(t, mcp.HTTPOptions{IdleTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", mcp.Path, addr)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.Close {
		t.Fatalf("the server closed the connection after its answer (%s); the test needs a keep-alive one", resp.Status)
	}
	start := time.Now()
	if !closedWithin(conn, r, 3*time.Second) {
		t.Fatal("an idle keep-alive connection was still open after 3 s")
	}
	t.Logf("idle keep-alive connection closed after %v", time.Since(start).Round(time.Millisecond))
}

// A body sent a byte at a time loses its connection once the request's
// time is up (issue 35: one held its connection for 20 s).
func TestASlowBodyIsCut(t *testing.T) {
	addr := limitedServer(t, mcp.HTTPOptions{ReadTimeout: 500 * time.Millisecond})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + strings.Repeat(" ", 400)
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", mcp.Path, addr, len(body))
	start := time.Now()
	sent := 0
	for sent < len(body) && time.Since(start) < 5*time.Second {
		if _, err := conn.Write([]byte{body[sent]}); err != nil {
			break
		}
		sent++
		time.Sleep(20 * time.Millisecond)
		// The server answers (or drops the connection) once the deadline passes.
		conn.SetReadDeadline(time.Now().Add(time.Millisecond))
		var b [1]byte
		if _, err := conn.Read(b[:]); err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				break // closed
			}
		} else {
			break // an answer: the error response to a cut body
		}
	}
	d := time.Since(start)
	t.Logf("a body sent a byte every 20 ms was cut after %d of %d bytes, %v", sent, len(body), d.Round(time.Millisecond))
	if sent >= len(body) || d > 2*time.Second {
		t.Fatalf("the slow body was read whole (%d bytes in %v)", sent, d)
	}
}

// Past the cap, a new session closes the one heard from longest ago; the
// others keep working, and so does the new one (issue 35: 1,500 sessions
// took 219 MiB and each lived 30 minutes).
func TestSessionsPastTheCapCloseTheLeastRecentlyUsed(t *testing.T) {
	addr := limitedServer(t, mcp.HTTPOptions{MaxSessions: 3})
	endpoint := "http://" + addr + mcp.Path
	connect := func() *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
			&sdk.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	var clients []*sdk.ClientSession
	for range 3 {
		clients = append(clients, connect())
		time.Sleep(10 * time.Millisecond)
	}
	// The first is used again, so the second is now the least recent.
	if _, err := clients[0].ListTools(t.Context(), nil); err != nil {
		t.Fatalf("the first session: %v", err)
	}
	// Requests without a session that are not an initialize start none,
	// and so close none.
	for range 5 {
		req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for i, cs := range clients {
		if _, err := cs.ListTools(t.Context(), nil); err != nil {
			t.Fatalf("session %d, after requests that start no session: %v", i+1, err)
		}
	}
	// Used in turn above, the first is now the least recent again.
	if _, err := clients[1].ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := clients[2].ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := clients[0].ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	clients = append(clients, connect(), connect())
	alive := 0
	for i, cs := range clients {
		_, err := cs.ListTools(t.Context(), nil)
		switch i {
		case 1, 2:
			if err == nil {
				t.Errorf("session %d, among the least recently used, still works past the cap of 3", i+1)
			}
		default:
			if err != nil {
				t.Errorf("session %d: %v", i+1, err)
			}
		}
		if err == nil {
			alive++
		}
	}
	if alive != 3 {
		t.Errorf("%d sessions work, want the cap, 3", alive)
	}
}

// The read timeout bounds reading a request, not the response: a
// session's SSE stream stays open past it.
func TestAStreamOutlivesTheReadTimeout(t *testing.T) {
	addr := limitedServer(t, mcp.HTTPOptions{ReadTimeout: 300 * time.Millisecond})
	post := func(body, session string) *http.Response {
		req, _ := http.NewRequest("POST", "http://"+addr+mcp.Path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: %s, no session", resp.Status)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n", mcp.Path, addr, session)
	r := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	stream, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %s", stream.Status)
	}
	if closedWithin(conn, r, time.Second) {
		t.Fatal("the SSE stream was closed within a second, past the 300 ms read timeout")
	}
}
