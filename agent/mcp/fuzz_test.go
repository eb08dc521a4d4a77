package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// FuzzFraming feeds arbitrary bytes to a server between a handshake and a
// probe request. Whatever the bytes, the server must not crash or hang,
// must write only JSON lines, must answer the probe exactly once (the
// framing recovered), and must answer every well-formed request line whose
// id is its own exactly once.
func FuzzFraming(f *testing.F) {
	for _, seed := range []string{
		"",
		"\n\n  \n",
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"word":"hi"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"broken","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"word":"caf` + "\xe9" + `"}}}`,
		batchLine,
		`[]`,
		`[1,2]`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list"` + "\r\n" + `}`,
		`{"jsonrpc":"2.0","id":6}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`,
		`{"jsonrpc":"2.0","id":9.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":10,"method":"ping"}{"jsonrpc":"2.0","id":11,"method":"ping"}`,
		"\x00\xff\xfe{",
		`{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"acolyte://nothing"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, _ := newServer(adapterTools(), Options{})
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx, Transport(inR, outW)); outW.Close() }()
		var (
			mu    sync.Mutex
			lines []string
		)
		read := make(chan struct{})
		go func() {
			defer close(read)
			sc := bufio.NewScanner(outR)
			sc.Buffer(nil, 4*MaxLineBytes)
			for sc.Scan() {
				mu.Lock()
				lines = append(lines, sc.Text())
				mu.Unlock()
			}
		}()

		const probe = `{"jsonrpc":"2.0","id":"probe-5c1f","method":"tools/call","params":{"name":"echo","arguments":{"word":"probe"}}}`
		input := fmt.Sprintf(initLine, "2025-06-18") + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			string(data) + "\n" + probe + "\n"
		go func() { io.WriteString(inW, input); inW.Close() }()

		select {
		case <-done:
		case <-ctx.Done():
			t.Fatalf("server still running 20s after stdin closed on input %q", data)
		}
		<-read

		replies := make(map[string]int)
		for _, line := range lines {
			if !json.Valid([]byte(line)) {
				t.Fatalf("server wrote a line that is not JSON: %q", line)
			}
			var msgs []json.RawMessage
			if line[0] == '[' {
				_ = json.Unmarshal([]byte(line), &msgs)
			} else {
				msgs = []json.RawMessage{json.RawMessage(line)}
			}
			for _, m := range msgs {
				var e envelope
				if json.Unmarshal(m, &e) == nil && e.Method == nil {
					if id, ok := idKey(e.ID); ok && id != "" {
						replies[id]++
					}
				}
			}
		}
		if n := replies["sprobe-5c1f"]; n != 1 && !bytes.Contains(data, []byte("probe-5c1f")) {
			t.Fatalf("the probe after %q got %d replies, want 1; output:\n%s", data, n, strings.Join(lines, "\n"))
		}
		for id, n := range ownRequests(data) {
			if replies[id] != n {
				t.Fatalf("request %s in %q got %d replies, want %d; output:\n%s", id, data, replies[id], n, strings.Join(lines, "\n"))
			}
		}
	})
}

// ownRequests finds the well-formed request lines in data, one JSON-RPC 2.0
// request object each, whose id appears in no other line, keyed by id.
func ownRequests(data []byte) map[string]int {
	uses := make(map[string]int)
	var requests []string
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		var m map[string]json.RawMessage
		if len(line) == 0 || len(line) > MaxLineBytes || line[0] != '{' || json.Unmarshal(line, &m) != nil {
			continue
		}
		for _, raw := range m {
			// An id may be named inside another message, e.g. in a cancellation.
			var v any
			if json.Unmarshal(raw, &v) == nil {
				collectIDs(v, uses)
			}
		}
		id, ok := idKey(m["id"])
		var method string
		if !ok || id == "" || string(m["jsonrpc"]) != `"2.0"` || json.Unmarshal(m["method"], &method) != nil {
			continue
		}
		requests = append(requests, id)
	}
	own := make(map[string]int)
	for _, id := range requests {
		if uses[id] == 1 && id != "sprobe-5c1f" && id != "n1" {
			own[id] = 1
		}
	}
	return own
}

// collectIDs counts every string and number in v as a possible id.
func collectIDs(v any, uses map[string]int) {
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			collectIDs(x, uses)
		}
	case []any:
		for _, x := range v {
			collectIDs(x, uses)
		}
	default:
		raw, _ := json.Marshal(v)
		if id, ok := idKey(raw); ok && id != "" {
			uses[id]++
		}
	}
}
