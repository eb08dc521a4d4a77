package mcp_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/agent/mcp"
)

// sseEvent is one event of a Streamable HTTP answer.
type sseEvent struct{ id, data string }

// postEvents sends one JSON-RPC message in session (none for the initialize)
// and returns the answer's session and events.
func postEvents(t *testing.T, endpoint, session, body string) (string, []sseEvent) {
	t.Helper()
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %.60s: %s %s", body, resp.Status, b)
	}
	return resp.Header.Get("Mcp-Session-Id"), readEvents(resp.Body)
}

func readEvents(r io.Reader) []sseEvent {
	var out []sseEvent
	var ev sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.id != "" || ev.data != "" {
				out = append(out, ev)
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			ev.data += strings.TrimPrefix(line, "data: ")
		}
	}
	if ev.id != "" || ev.data != "" {
		out = append(out, ev)
	}
	return out
}

// resume asks for the events of a stream after lastID, as a client whose
// connection broke does.
func resume(t *testing.T, endpoint, session, lastID string) (int, []sseEvent) {
	t.Helper()
	req, _ := http.NewRequest("GET", endpoint, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", lastID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, readEvents(resp.Body)
}

// A client that lost the stream of a call gets its answer again from
// Last-Event-ID, through the server's bounded event store; once the
// session has made 16 newer streams, that old one is refused rather than
// kept for ever (issue 37).
func TestHTTPResumesARecentStreamOnly(t *testing.T) {
	endpoint := "http://" + limitedServer(t, mcp.HTTPOptions{}) + mcp.Path
	session, _ := postEvents(t, endpoint, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if session == "" {
		t.Fatal("no session started")
	}
	postEvents(t, endpoint, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, events := postEvents(t, endpoint, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_add","arguments":{"content":"Deploys go out on Tuesdays","scope":"user"}}}`)
	if len(events) < 2 || !strings.Contains(events[len(events)-1].data, `"id":2`) {
		t.Fatalf("the call's stream: want a priming event and the answer, got %+v", events)
	}
	priming := events[len(events)-2].id

	code, replayed := resume(t, endpoint, session, priming)
	if code != http.StatusOK || len(replayed) == 0 || replayed[0].data != events[len(events)-1].data {
		t.Fatalf("resume after %s: %d %+v; want the answer again", priming, code, replayed)
	}

	for i := range 16 {
		postEvents(t, endpoint, session, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"when do deploys go out"}}}`, 10+i))
	}
	if code, _ := resume(t, endpoint, session, priming); code != http.StatusBadRequest {
		t.Errorf("resume of a stream 16 streams old: %d, want 400 (no longer kept)", code)
	}
}
