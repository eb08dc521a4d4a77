package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTimeout bounds how long the server keeps answering after the client
// closed stdin. It exceeds memory.BusyTimeout, so a call waiting on a locked
// database still gets its answer.
const drainTimeout = 30 * time.Second

// Transport returns the stdio transport over r and w: newline-delimited
// JSON-RPC like the SDK's StdioTransport, with two differences that keep a
// session alive and honest.
//
// A line that is not a JSON-RPC 2.0 message is answered with a JSON-RPC
// error. The SDK would treat it as a broken stream and hang up, and a client
// that starts the server once per session would lose its memory tools.
//
// When r ends, requests already received are answered before the session
// closes. The SDK would cancel them, so `printf '…' | acolyte mcp` would
// silently drop the memory_add it was given.
func Transport(r io.Reader, w io.Writer) sdk.Transport {
	t := &lineTransport{r: r, inFlight: make(map[string]bool)}
	t.w = &replyWriter{w: w, answered: t.answered}
	t.idle = sync.NewCond(&t.mu)
	return t
}

type lineTransport struct {
	r io.Reader
	w *replyWriter

	mu       sync.Mutex
	idle     *sync.Cond // signalled when inFlight empties
	inFlight map[string]bool
}

func (t *lineTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	pr, pw := io.Pipe()
	go t.forward(pw)
	return (&sdk.IOTransport{Reader: pr, Writer: t.w}).Connect(ctx)
}

// forward copies well-formed messages from the client to the SDK one line at
// a time and answers malformed ones itself.
func (t *lineTransport) forward(sdkIn *io.PipeWriter) {
	in := bufio.NewReader(t.r)
	for {
		line, err := in.ReadBytes('\n')
		if msg := bytes.TrimSpace(line); len(msg) > 0 {
			requests, reply := checkMessage(msg)
			if reply != nil {
				if werr := t.w.writeLine(reply); werr != nil {
					sdkIn.CloseWithError(werr)
					return
				}
			} else {
				t.sent(requests)
				if _, werr := sdkIn.Write(append(msg, '\n')); werr != nil {
					return // the session is already over
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				t.drain()
				err = nil // the client hanging up is how a session ends
			}
			sdkIn.CloseWithError(err)
			return
		}
	}
}

func (t *lineTransport) sent(ids []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		t.inFlight[id] = true
	}
}

func (t *lineTransport) answered(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.inFlight, id)
	if len(t.inFlight) == 0 {
		t.idle.Broadcast()
	}
}

// drain waits until every request received has been answered, or
// drainTimeout passes.
func (t *lineTransport) drain() {
	timer := time.AfterFunc(drainTimeout, func() {
		t.mu.Lock()
		clear(t.inFlight)
		t.mu.Unlock()
		t.idle.Broadcast()
	})
	defer timer.Stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.inFlight) > 0 {
		t.idle.Wait()
	}
}

// envelope is what the transport reads of a message: enough to tell a
// request from a notification or a response, and to check the SDK can take it.
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
}

// checkMessage accepts line if it is a JSON-RPC 2.0 message or batch the
// SDK can decode, returning the ids of the requests in it. Otherwise it
// returns the error response to send back.
func checkMessage(line []byte) (requests []string, reply []byte) {
	if !json.Valid(line) {
		return nil, rpcError(nil, -32700, "Parse error: each line must be one JSON-RPC message")
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return nil, rpcError(nil, -32600, "Invalid Request: a batch must be a non-empty array of messages")
		}
		for _, m := range batch {
			ids, reply := checkMessage(m)
			if reply != nil {
				return nil, reply
			}
			requests = append(requests, ids...)
		}
		return requests, nil
	}
	var m envelope
	if json.Unmarshal(line, &m) != nil {
		return nil, rpcError(nil, -32600, "Invalid Request: a message must be a JSON object")
	}
	id, ok := idKey(m.ID)
	switch {
	case !ok:
		return nil, rpcError(nil, -32600, "Invalid Request: id must be a string or an integer")
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		return nil, rpcError(m.ID, -32600, `Invalid Request: "jsonrpc" must be "2.0"`)
	case m.Method == nil && id == "":
		return nil, rpcError(nil, -32600, `Invalid Request: give a "method", or an "id" for a response`)
	case m.Method != nil && id != "":
		return []string{id}, nil
	}
	return nil, nil
}

// idKey returns a JSON-RPC id in a canonical form, so that the id of a
// request and of its response compare equal however each was spelt; "" means
// no id. ok is false for ids the SDK rejects: anything but a string or an
// integer.
func idKey(raw json.RawMessage) (key string, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return "s" + v, true
	case float64:
		if v != math.Trunc(v) {
			return "", false
		}
		return "n" + strconv.FormatFloat(v, 'f', -1, 64), true
	}
	return "", false
}

func rpcError(id json.RawMessage, code int, message string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type rpcErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcErr          `json:"error"`
	}{"2.0", id, rpcErr{code, message}})
	if err != nil { // an id that json.Valid accepted always re-marshals
		return rpcError(nil, code, message)
	}
	return b
}

// replyWriter writes whole lines, one per Write, so the SDK's messages and
// the transport's own error replies never interleave, and it notes which
// requests have been answered.
type replyWriter struct {
	mu       sync.Mutex
	w        io.Writer
	answered func(id string)
}

func (r *replyWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	n, err := r.w.Write(p)
	r.mu.Unlock()
	r.noteAnswers(bytes.TrimSpace(p))
	return n, err
}

func (r *replyWriter) noteAnswers(msg []byte) {
	if len(msg) == 0 {
		return
	}
	if msg[0] == '[' {
		var batch []json.RawMessage
		_ = json.Unmarshal(msg, &batch) // the SDK writes valid JSON
		for _, m := range batch {
			r.noteAnswers(m)
		}
		return
	}
	var m envelope
	if json.Unmarshal(msg, &m) != nil || m.Method != nil {
		return // not a response
	}
	if id, ok := idKey(m.ID); ok && id != "" {
		r.answered(id)
	}
}

func (r *replyWriter) writeLine(p []byte) error {
	_, err := r.Write(append(append([]byte(nil), p...), '\n'))
	return err
}

// Close leaves w open: it belongs to the caller, usually os.Stdout.
func (r *replyWriter) Close() error { return nil }
