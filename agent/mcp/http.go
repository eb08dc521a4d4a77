package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the Streamable HTTP endpoint is served.
const Path = "/mcp"

// Bounds of the HTTP server (issue 35: 200 idle keep-alive connections
// stayed open, a body sent a byte at a time held its connection for 20 s,
// and 1,500 sessions took the server from 40 to 219 MiB, each kept 30
// minutes). Every one can be lowered in HTTPOptions, for the tests.
const (
	// sessionIdle closes a session its client left without DELETE;
	// clients reconnect with a new one (a 404 tells them to).
	sessionIdle = 10 * time.Minute
	// maxSessions is the most sessions served at once: a few editors and
	// agents each, far above what one machine's clients open. A new one
	// past it closes the session whose client was heard from longest ago.
	maxSessions = 64
	// headerTimeout bounds reading a request's headers, and readTimeout
	// the whole request, body included: a tool call's arguments arrive in
	// one write. (net/http lifts the read deadline once the body is read,
	// so a response streamed for minutes, SSE, is not cut.)
	headerTimeout = 10 * time.Second
	readTimeout   = 20 * time.Second
	// idleTimeout closes a keep-alive connection that sends no request.
	idleTimeout = 30 * time.Second
	// maxBodyBytes bounds a request's body: a memory is at most a few
	// KiB, a bulk call a few hundred of them.
	maxBodyBytes = 8 << 20
)

// HTTPOptions guards the HTTP endpoint.
type HTTPOptions struct {
	// Token is the bearer token every request must carry. Empty serves
	// without one, which only a loopback address may do (the CLI enforces it).
	Token string
	// Origins are the browser origins allowed besides loopback ones, such as
	// "https://ide.example.com".
	Origins []string
	Logger  *slog.Logger
	// MaxSessions, SessionIdle, HeaderTimeout, ReadTimeout and
	// IdleTimeout lower the server's bounds (maxSessions and the rest);
	// zero keeps each default.
	MaxSessions   int
	SessionIdle   time.Duration
	HeaderTimeout time.Duration
	ReadTimeout   time.Duration
	IdleTimeout   time.Duration
}

func orDefault[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// HTTPServer is the http.Server of Handler with its bounds: headers and
// the whole request read within their timeouts, idle keep-alive
// connections closed.
func (h *Host) HTTPServer(opts HTTPOptions) *http.Server {
	return &http.Server{
		Handler:           h.Handler(opts),
		ReadHeaderTimeout: orDefault(opts.HeaderTimeout, headerTimeout),
		ReadTimeout:       orDefault(opts.ReadTimeout, readTimeout),
		IdleTimeout:       orDefault(opts.IdleTimeout, idleTimeout),
		MaxHeaderBytes:    64 << 10,
	}
}

// NewToken returns a random bearer token of 256 bits.
func NewToken() string { return rand.Text() + rand.Text() }

// Handler serves MCP's Streamable HTTP transport at Path, through the SDK:
// sessions, an SSE stream per request and a standalone one, and resumption
// of a broken stream from Last-Event-ID out of an in-memory event store
// that keeps each session's latest streams (eventLog).
// Each session gets a server of its own, so each follows its own client's
// roots. Requests pass two guards first:
//
//   - An Origin header that is not a loopback origin, nor one of
//     opts.Origins, is refused with 403: a web page the user visits must
//     not drive the tools, even through DNS rebinding. (The SDK also
//     refuses a non-loopback Host on a loopback address.)
//   - Without the bearer token a request is refused with 401.
func (h *Host) Handler(opts HTTPOptions) http.Handler {
	// A sessionless server answers the SDK's per-request question about
	// protocol versions; only a request without a session starts a server.
	prototype := h.Server()
	pool := &sessionPool{max: orDefault(opts.MaxSessions, maxSessions), servers: map[*sdk.Server]time.Time{}, seen: map[string]time.Time{}}
	stream := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		// Only an initialize starts a session (the SDK closes any other at
		// once), so only an initialize makes room for one.
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || r.Context().Value(initializing{}) == nil {
			return prototype
		}
		return pool.newServer(h)
	}, &sdk.StreamableHTTPOptions{
		EventStore:          newEventLog(keptStreams, maxEventBytes),
		SessionTimeout:      orDefault(opts.SessionIdle, sessionIdle),
		Logger:              opts.Logger,
		MaxRequestBodyBytes: maxBodyBytes,
	})
	mux := http.NewServeMux()
	mux.Handle(Path, requireToken(opts.Token, pool.track(stream)))
	return checkOrigin(opts.Origins, mux)
}

// sessionPool bounds the sessions served at once: past max, a new session
// closes the one whose client was heard from longest ago (which the SDK
// then forgets; that client's next request gets 404 and starts anew).
type sessionPool struct {
	mu      sync.Mutex
	max     int
	servers map[*sdk.Server]time.Time // each session's server, by when it was made
	seen    map[string]time.Time      // each session's last request
}

// pendingSession is how long a server made for a new session may wait
// for its client's initialize before it is forgotten.
const pendingSession = time.Minute

// newServer makes the server of a new session, closing the least recently
// heard-from sessions while max are live.
func (p *sessionPool) newServer(h *Host) *sdk.Server {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	type live struct {
		ss   *sdk.ServerSession
		last time.Time
	}
	var sessions []live
	ids := map[string]bool{}
	for srv, made := range p.servers {
		n := 0
		for ss := range srv.Sessions() {
			last, ok := p.seen[ss.ID()]
			if !ok {
				last = made
			}
			sessions = append(sessions, live{ss, last})
			ids[ss.ID()] = true
			n++
		}
		if n == 0 && now.Sub(made) > pendingSession {
			delete(p.servers, srv)
		}
	}
	for id := range p.seen {
		if !ids[id] {
			delete(p.seen, id)
		}
	}
	slices.SortFunc(sessions, func(a, b live) int { return a.last.Compare(b.last) })
	for i := 0; len(sessions)-i >= p.max; i++ {
		_ = sessions[i].ss.Close()
		delete(p.seen, sessions[i].ss.ID())
	}
	srv := h.Server()
	p.servers[srv] = now
	return srv
}

// initializing marks, in a request's context, a POST without a session
// whose body is an initialize request.
type initializing struct{}

// track notes when each session's client was last heard from, and marks
// the requests that may start a session.
func (p *sessionPool) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		switch {
		case id != "":
			p.mu.Lock()
			if _, known := p.seen[id]; known || len(p.seen) < 4*p.max {
				p.seen[id] = time.Now()
			}
			p.mu.Unlock()
		case r.Method == http.MethodPost && r.Body != nil:
			// The SDK reads the body again, from what is read here.
			body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
			var msg struct {
				Method string `json:"method"`
			}
			if err == nil && len(body) <= maxBodyBytes && json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" {
				r = r.WithContext(context.WithValue(r.Context(), initializing{}, true))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses requests from a browser page of another origin.
// Requests without Origin come from programs, not pages, and pass.
func checkOrigin(allowed []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && !loopbackOrigin(origin) && !slices.Contains(allowed, origin) {
			http.Error(w, "Forbidden: Origin "+origin+" may not use this server; start it with --allow-origin "+
				origin+" to allow it", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	return Loopback(u.Hostname())
}

// Loopback reports whether host names this machine's loopback interface.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// requireToken refuses a request without "Authorization: Bearer token".
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="acolyte"`)
			msg := "Unauthorized: send the token acolyte mcp printed when it started, as Authorization: Bearer TOKEN"
			if len(got) == 0 {
				msg = "Unauthorized: no Authorization header; send Authorization: Bearer TOKEN with the token acolyte mcp printed when it started"
			}
			http.Error(w, msg, http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
