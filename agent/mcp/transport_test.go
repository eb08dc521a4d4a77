package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
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
	wait  time.Duration // for each reply
}

func startRaw(t *testing.T) *rawSession {
	s, _ := newServer(adapterTools(), Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	rs := &rawSession{t: t, in: inW, lines: make(chan string, 16), done: make(chan error, 1), wait: 5 * time.Second}
	go func() { rs.done <- s.Run(t.Context(), Transport(inR, outW)) }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 2*MaxLineBytes) // the echo of a message near the limit
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
	case <-time.After(rs.wait):
		rs.t.Fatalf("no reply within %v", rs.wait)
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

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// initialize completes the handshake at protocol version v.
func (rs *rawSession) initialize(v string) {
	rs.t.Helper()
	rs.send(fmt.Sprintf(initLine, v))
	if id, code, raw := rs.reply(); id != "1" || code != 0 {
		rs.t.Fatalf("initialize: %s", raw)
	}
	rs.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// echo checks the session still answers calls.
func (rs *rawSession) echo(id string) {
	rs.t.Helper()
	rs.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"echo","arguments":{"word":"ok"}}}`)
	if got, code, raw := rs.reply(); got != `"`+id+`"` || code != 0 {
		rs.t.Fatalf("call %s: %s", id, raw)
	}
}

const batchLine = `[{"jsonrpc":"2.0","id":"b1","method":"tools/list"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]`

func TestBatchIsAnErrorFrom20250618AndTheSessionContinues(t *testing.T) {
	for _, v := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			rs := startRaw(t)
			rs.initialize(v)
			rs.send(batchLine)
			id, code, raw := rs.reply()
			if id != "null" || code != -32600 || !strings.Contains(raw, "batches are not supported") {
				t.Fatalf("batch at %s: %s, want a -32600 error saying batches are not supported", v, raw)
			}
			rs.echo("after-batch")
		})
	}
}

func TestBatchBeforeInitializeIsAnError(t *testing.T) {
	rs := startRaw(t)
	rs.send(batchLine)
	if id, code, raw := rs.reply(); id != "null" || code != -32600 {
		t.Fatalf("batch before initialize: %s", raw)
	}
	rs.initialize("2025-06-18")
	rs.echo("after")
}

// TestBatchAt20250326IsServed: that version has batches, so they work.
func TestBatchAt20250326IsServed(t *testing.T) {
	rs := startRaw(t)
	rs.initialize("2025-03-26")
	rs.send(batchLine)
	var raw string
	select {
	case raw = <-rs.lines:
	case <-time.After(5 * time.Second):
		t.Fatal("no reply to the batch within 5s")
	}
	var replies []struct {
		ID     string
		Result json.RawMessage
	}
	if err := json.Unmarshal([]byte(raw), &replies); err != nil || len(replies) != 2 ||
		replies[0].ID != "b1" || replies[1].ID != "b2" || replies[0].Result == nil {
		t.Fatalf("batch at 2025-03-26: %s", raw)
	}
	rs.echo("after")
}

func TestRequestBeforeInitializeHasARealErrorCode(t *testing.T) {
	rs := startRaw(t)
	rs.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	if id, code, raw := rs.reply(); id != "7" || code != -32600 || !strings.Contains(raw, "initialize") {
		t.Fatalf("tools/list before initialize: %s, want error -32600 asking for initialize", raw)
	}
	rs.initialize("2025-06-18")
	rs.echo("after")
}

func TestLineTooLongIsAnErrorAndTheSessionContinues(t *testing.T) {
	rs := startRaw(t)
	rs.wait = time.Minute // 16 MiB lines take seconds on a loaded machine
	rs.initialize("2025-06-18")
	word := strings.Repeat("a", MaxLineBytes)
	rs.send(`{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"echo","arguments":{"word":"` + word + `"}}}`)
	id, code, raw := rs.reply()
	if id != `"huge"` || code != -32600 || !strings.Contains(raw, strconv.Itoa(MaxLineBytes)) {
		t.Fatalf("a line over %d bytes: %.300s, want error -32600 for id \"huge\" naming the limit", MaxLineBytes, raw)
	}
	rs.echo("after-huge")

	// Just under the limit is still a message.
	head := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"echo","arguments":{"word":"`
	tail := `"}}}`
	rs.send(head + strings.Repeat("b", MaxLineBytes-len(head)-len(tail)) + tail)
	if id, code, raw := rs.reply(); id != `"big"` || code != 0 {
		t.Fatalf("a line of exactly %d bytes: %.300s", MaxLineBytes, raw)
	}
}
