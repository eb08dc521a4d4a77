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
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes bounds one message. The SDK's stdio transport hangs up on a
// longer one; this transport answers it with an error and reads on. The
// largest legitimate message, a memory_search of ten 8 KiB queries, is
// under 100 KiB.
const MaxLineBytes = sdk.DefaultMaxLineLength

// drainTimeout bounds how long the server keeps answering after the client
// closed stdin. It exceeds sqlite.BusyTimeout, so a call waiting on a locked
// database still gets its answer.
const drainTimeout = 30 * time.Second

// Transport returns the stdio transport over r and w: newline-delimited
// JSON-RPC like the SDK's StdioTransport, with differences that keep a
// session alive and honest.
//
// A line that is not a JSON-RPC 2.0 message is answered with a JSON-RPC
// error. The SDK would treat it as a broken stream and hang up, and a client
// that starts the server once per session would lose its memory tools.
//
// A JSON-RPC batch is answered with an error unless the client negotiated a
// protocol version that has batches (2025-03-26 and before); the SDK would
// end the session. So is a line longer than MaxLineBytes.
//
// An error reply the SDK sends with code 0, which JSON-RPC does not define
// (e.g. tools/list before initialize), is sent with a real code instead.
//
// When r ends, requests already received are answered before the session
// closes. The SDK would cancel them, so `printf '…' | acolyte mcp` would
// silently drop the memory_add it was given.
func Transport(r io.Reader, w io.Writer) sdk.Transport {
	t := &lineTransport{r: r, inFlight: make(map[string]bool), initIDs: make(map[string]bool)}
	t.w = &replyWriter{w: w, replying: t.replying, answered: t.answered}
	t.idle = sync.NewCond(&t.mu)
	return t
}

type lineTransport struct {
	r io.Reader
	w *replyWriter

	mu       sync.Mutex
	idle     *sync.Cond // signalled when inFlight empties
	inFlight map[string]bool

	// batches is true once the server accepted a protocol version with
	// batches, which the SDK then serves. Before initialize there are none:
	// initialize itself must not be batched.
	batches bool
	// initIDs are the initialize requests not yet answered; their answers
	// carry the protocol version the SDK settled on.
	initIDs map[string]bool
}

// hasBatches reports whether the SDK accepts batches at protocol version v.
func hasBatches(v string) bool { return v == "2024-11-05" || v == "2025-03-26" }

func (t *lineTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	pr, pw := io.Pipe()
	go t.forward(pw)
	// forward enforces MaxLineBytes itself and answers what is too long.
	return (&sdk.IOTransport{Reader: pr, Writer: t.w, MaxLineLength: -1}).Connect(ctx)
}

// forward copies well-formed messages from the client to the SDK one line at
// a time and answers malformed ones itself.
func (t *lineTransport) forward(sdkIn *io.PipeWriter) {
	in := bufio.NewReader(t.r)
	var buf []byte
	for {
		line, size, err := readLine(in, MaxLineBytes, buf[:0])
		buf = line
		if cap(buf) > 1<<20 {
			buf = nil // do not hold on to the memory of one huge line
		}
		if msg := bytes.TrimSpace(line); len(msg) > 0 || size > MaxLineBytes {
			var (
				requests []string
				reply    []byte
			)
			if size > MaxLineBytes {
				reply = rpcError(prefixID(msg), -32600, "Invalid Request: the message is "+strconv.Itoa(size)+
					" bytes, more than the "+strconv.Itoa(MaxLineBytes)+" a line may hold; send less in one call")
			} else {
				requests, reply = t.check(msg)
			}
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

// readLine reads up to the next newline into buf, keeping at most max+1
// bytes of it and discarding the rest, so that no line, however long, is
// held in memory whole. size is the line's full length without its newline.
func readLine(in *bufio.Reader, max int, buf []byte) (line []byte, size int, err error) {
	for {
		chunk, err := in.ReadSlice('\n')
		data := bytes.TrimSuffix(chunk, []byte("\n"))
		size += len(data)
		if room := max + 1 - len(buf); room > 0 {
			buf = append(buf, data[:min(len(data), room)]...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, size, err
		}
	}
}

// prefixID finds the id of a request cut short, so that the client learns
// which of its requests failed: it is usually near the start.
func prefixID(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if key == "id" {
			if _, ok := idKey(v); ok {
				return v
			}
			return nil
		}
	}
	return nil
}

// check is checkMessage plus what depends on the session: batches, and the
// protocol version that decides whether they are allowed.
func (t *lineTransport) check(msg []byte) (requests []string, reply []byte) {
	requests, reply = checkMessage(msg)
	if reply != nil {
		return nil, reply
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if msg[0] == '[' {
		if !t.batches {
			return nil, rpcError(nil, -32600, "Invalid Request: JSON-RPC batches are not supported in protocol "+
				"2025-06-18 and later, nor before initialize; send one message per line")
		}
		return requests, nil
	}
	var init struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &init) == nil && init.Method == "initialize" {
		if id, _ := idKey(init.ID); id != "" {
			t.initIDs[id] = true
		}
	}
	return requests, nil
}

func (t *lineTransport) sent(ids []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		t.inFlight[id] = true
	}
}

func (t *lineTransport) answered(id string, _ []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.inFlight, id)
	if len(t.inFlight) == 0 {
		t.idle.Broadcast()
	}
}

// replying learns the protocol version from the answer to initialize before
// the client reads it, so a batch the client sends next is judged by it.
func (t *lineTransport) replying(id string, msg []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.initIDs[id] {
		return
	}
	delete(t.initIDs, id)
	var init struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &init) == nil && init.Result.ProtocolVersion != "" {
		t.batches = hasBatches(init.Result.ProtocolVersion)
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

// maxDepth is the nesting the SDK's decoder accepts; a deeper message
// fails the SDK's read of the stream, which ends the session.
const maxDepth = 1000

// checkMessage accepts line if it is a JSON-RPC 2.0 message or batch the
// SDK can decode, returning the ids of the requests in it. Otherwise it
// returns the error response to send back.
func checkMessage(line []byte) (requests []string, reply []byte) {
	if !json.Valid(line) {
		return nil, rpcError(nil, -32700, "Parse error: each line must be one JSON-RPC message")
	}
	if depth(line) > maxDepth {
		return nil, rpcError(nil, -32600, "Invalid Request: the message nests deeper than "+strconv.Itoa(maxDepth)+" levels")
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return nil, rpcError(nil, -32600, "Invalid Request: a batch must be a non-empty array of messages")
		}
		for _, m := range batch {
			ids, reply := checkOne(m)
			if reply != nil {
				return nil, reply
			}
			requests = append(requests, ids...)
		}
		return requests, nil
	}
	return checkOne(line)
}

// checkOne checks one message of a line or batch. The friendly checks come
// first; the SDK's own decoder has the last word, since what it cannot
// decode ends the session.
func checkOne(raw []byte) (requests []string, reply []byte) {
	var m envelope
	if json.Unmarshal(raw, &m) != nil {
		return nil, rpcError(nil, -32600, "Invalid Request: a message must be a JSON object")
	}
	id, integral := idKey(m.ID)
	switch {
	case !integral:
		return nil, rpcError(nil, -32600, "Invalid Request: id must be a string or an integer")
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		return nil, rpcError(m.ID, -32600, `Invalid Request: "jsonrpc" must be "2.0"`)
	case m.Method == nil && id == "":
		return nil, rpcError(nil, -32600, `Invalid Request: give a "method", or an "id" for a response`)
	}
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return nil, rpcError(m.ID, -32600, "Invalid Request: "+err.Error())
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		return []string{sdkIDKey(req.ID)}, nil
	}
	return nil, nil
}

// depth is how deeply JSON text nests its arrays and objects.
func depth(b []byte) int {
	var d, most int
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}

// idKey returns a JSON-RPC id in the form sdkIDKey gives the SDK's decoded
// ids, so that a request and its response compare equal however each was
// spelt; "" means no id. integral is false for ids the transport refuses:
// anything but a string or an integer.
func idKey(raw json.RawMessage) (key string, integral bool) {
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
		// The SDK truncates a number id to an int64 the same way.
		return "n" + strconv.FormatInt(int64(v), 10), v == math.Trunc(v)
	}
	return "", false
}

func sdkIDKey(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return "s" + v
	case int64:
		return "n" + strconv.FormatInt(v, 10)
	}
	return ""
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
// the transport's own error replies never interleave. It shows each reply to
// replying before the client can read it, and notes it as answered after.
type replyWriter struct {
	mu       sync.Mutex
	w        io.Writer
	replying func(id string, msg []byte)
	answered func(id string, msg []byte)
}

func (r *replyWriter) Write(p []byte) (int, error) {
	msg := bytes.TrimSpace(p)
	out := p
	if fixed, ok := fixErrorCodes(msg); ok {
		out = append(fixed, '\n')
	}
	noteAnswers(msg, r.replying)
	r.mu.Lock()
	_, err := r.w.Write(out)
	r.mu.Unlock()
	noteAnswers(msg, r.answered)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// fixErrorCodes gives each error reply in msg that has code 0 a JSON-RPC
// code: -32600 for a request the session's state does not allow (the SDK's
// "invalid during session initialization"), -32603 for anything else. ok is
// false when nothing needed fixing.
func fixErrorCodes(msg []byte) (fixed []byte, ok bool) {
	if !bytes.Contains(msg, []byte(`"error"`)) {
		return nil, false
	}
	if len(msg) > 0 && msg[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(msg, &batch) != nil {
			return nil, false
		}
		for i, m := range batch {
			if f, ok1 := fixErrorCodes(m); ok1 {
				batch[i], ok = f, true
			}
		}
		if !ok {
			return nil, false
		}
		fixed, err := json.Marshal(batch)
		return fixed, err == nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["error"] == nil {
		return nil, false
	}
	var e map[string]json.RawMessage
	if json.Unmarshal(m["error"], &e) != nil {
		return nil, false
	}
	if code, has := e["code"]; has && string(code) != "0" {
		return nil, false
	}
	var message string
	_ = json.Unmarshal(e["message"], &message) // a missing message is fine
	code := -32603
	if strings.Contains(message, "during session initialization") {
		code = -32600
		e["message"], _ = json.Marshal("Invalid Request: " + message + "; send initialize first")
	}
	e["code"] = json.RawMessage(strconv.Itoa(code))
	var err error
	if m["error"], err = json.Marshal(e); err != nil {
		return nil, false
	}
	fixed, err = json.Marshal(m)
	return fixed, err == nil
}

// noteAnswers calls note with each response in msg and its id.
func noteAnswers(msg []byte, note func(id string, msg []byte)) {
	if len(msg) == 0 {
		return
	}
	if msg[0] == '[' {
		var batch []json.RawMessage
		_ = json.Unmarshal(msg, &batch) // the SDK writes valid JSON
		for _, m := range batch {
			noteAnswers(m, note)
		}
		return
	}
	var m envelope
	if json.Unmarshal(msg, &m) != nil || m.Method != nil {
		return // not a response
	}
	if id, ok := idKey(m.ID); ok && id != "" {
		note(id, msg)
	}
}

func (r *replyWriter) writeLine(p []byte) error {
	_, err := r.Write(append(append([]byte(nil), p...), '\n'))
	return err
}

// Close leaves w open: it belongs to the caller, usually os.Stdout.
func (r *replyWriter) Close() error { return nil }
