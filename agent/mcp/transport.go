package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport returns the stdio transport for r and w: newline-delimited
// JSON-RPC, as the SDK's StdioTransport, except that a line which is not a
// JSON object or batch is answered with a JSON-RPC parse error instead of
// ending the session. The SDK treats such a line as a broken stream and
// hangs up, and a client that started the server once per session would then
// lose its memory tools for the rest of it.
func Transport(r io.Reader, w io.Writer) sdk.Transport {
	return &lineTransport{r: r, w: &lockedWriter{w: w}}
}

type lineTransport struct {
	r io.Reader
	w *lockedWriter
}

func (t *lineTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	pr, pw := io.Pipe()
	go t.forward(pw)
	return (&sdk.IOTransport{Reader: pr, Writer: t.w}).Connect(ctx)
}

// forward copies well-formed messages from the client to the SDK, one line
// at a time, and answers the rest itself.
func (t *lineTransport) forward(sdkIn *io.PipeWriter) {
	in := bufio.NewReader(t.r)
	for {
		line, err := in.ReadBytes('\n')
		if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if reply := checkMessage(msg); reply != nil {
				if werr := t.w.writeLine(reply); werr != nil {
					sdkIn.CloseWithError(werr)
					return
				}
			} else if _, werr := sdkIn.Write(append(msg, '\n')); werr != nil {
				return // the session is over
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil // the client hung up, which is how sessions end
			}
			sdkIn.CloseWithError(err)
			return
		}
	}
}

// checkMessage returns nil if line is a JSON-RPC 2.0 message (or batch of
// them) the SDK can decode, and otherwise the error response to send back.
func checkMessage(line []byte) []byte {
	if !json.Valid(line) {
		return rpcError(nil, -32700, "Parse error: each line must be one JSON-RPC message")
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return rpcError(nil, -32600, "Invalid Request: a batch must be a non-empty array of messages")
		}
		for _, m := range batch {
			if reply := checkMessage(m); reply != nil {
				return reply
			}
		}
		return nil
	}
	var m struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil {
		return rpcError(nil, -32600, "Invalid Request: a message must be a JSON object")
	}
	id, idOK := usableID(m.ID)
	switch {
	case !idOK:
		return rpcError(nil, -32600, "Invalid Request: id must be a string or an integer")
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		return rpcError(id, -32600, `Invalid Request: "jsonrpc" must be "2.0"`)
	case m.Method == nil && id == nil:
		return rpcError(nil, -32600, `Invalid Request: give a "method", or an "id" for a response`)
	}
	return nil
}

// usableID reports whether raw is an id the SDK accepts, returning it in
// canonical form, or nil when there is none.
func usableID(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	switch v := v.(type) {
	case string:
		return raw, true
	case float64:
		return raw, v == math.Trunc(v)
	}
	return nil, false
}

func rpcError(id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	type rpcErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct { // strings, ints and valid raw JSON always marshal
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcErr          `json:"error"`
	}{"2.0", id, rpcErr{code, message}})
	return b
}

// lockedWriter keeps the SDK's messages and our parse errors whole: each
// Write is one complete line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) writeLine(p []byte) error {
	_, err := l.Write(append(append([]byte(nil), p...), '\n'))
	return err
}

// Close leaves w open: it belongs to the caller, usually os.Stdout.
func (l *lockedWriter) Close() error { return nil }
