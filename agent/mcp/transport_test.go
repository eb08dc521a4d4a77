package mcp

import (
	"bufio"
	"encoding/json"
	"io"
	"testing"
	"time"
)

// rawSession drives a server over Transport with hand-written lines, as a
// client in another language would.
type rawSession struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func startRaw(t *testing.T) *rawSession {
	s, _ := newServer(adapterTools(), Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rs := &rawSession{t: t, in: inW, lines: make(chan string, 16), done: make(chan error, 1)}
	go func() { rs.done <- s.Run(t.Context(), Transport(inR, outW)) }()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			rs.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return rs
}

func (rs *rawSession) send(line string) {
	rs.t.Helper()
	if _, err := io.WriteString(rs.in, line+"\n"); err != nil {
		rs.t.Fatalf("send %s: %v", line, err)
	}
}

// reply reads the next message and decodes its id and error code.
func (rs *rawSession) reply() (id string, code int, raw string) {
	rs.t.Helper()
	select {
	case line := <-rs.lines:
		var m struct {
			ID    json.RawMessage
			Error *struct{ Code int }
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			rs.t.Fatalf("server wrote a line that is not JSON: %q", line)
		}
		if m.Error != nil {
			code = m.Error.Code
		}
		return string(m.ID), code, line
	case err := <-rs.done:
		rs.t.Fatalf("server ended the session: %v", err)
	case <-time.After(5 * time.Second):
		rs.t.Fatal("no reply within 5s")
	}
	return "", 0, ""
}

func TestMalformedLinesGetErrorsAndTheSessionContinues(t *testing.T) {
	rs := startRaw(t)
	rs.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if id, code, raw := rs.reply(); id != "1" || code != 0 {
		t.Fatalf("initialize: %s", raw)
	}
	rs.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	for _, c := range []struct {
		line string
		code int
	}{
		{`not json at all`, -32700},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"`, -32700}, // cut short
		{`42`, -32600},
		{`{"id":3,"method":"tools/list"}`, -32600},              // no version tag
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"x"}`, -32600}, // object id
		{`{"jsonrpc":"2.0"}`, -32600},                           // neither request nor response
		{`[]`, -32600},
	} {
		rs.send(c.line)
		if _, code, raw := rs.reply(); code != c.code {
			t.Errorf("%s: got %s, want error code %d", c.line, raw, c.code)
		}
	}

	rs.send(`{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"echo","arguments":{"word":"ok"}}}`)
	if id, code, raw := rs.reply(); id != `"after"` || code != 0 {
		t.Fatalf("call after bad lines: %s", raw)
	}

	rs.in.Close()
	select {
	case err := <-rs.done:
		if err != nil {
			t.Errorf("closing stdin should end the session cleanly, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("server still running 5s after stdin closed")
	}
}
