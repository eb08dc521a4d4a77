package mcp

import (
	"crypto/rand"
	"crypto/subtle"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the Streamable HTTP endpoint is served.
const Path = "/mcp"

// sessionIdle closes a session its client left without DELETE; clients
// reconnect with a new one.
const sessionIdle = 30 * time.Minute

// HTTPOptions guards the HTTP endpoint.
type HTTPOptions struct {
	// Token is the bearer token every request must carry. Empty serves
	// without one, which only a loopback address may do (the CLI enforces it).
	Token string
	// Origins are the browser origins allowed besides loopback ones, such as
	// "https://ide.example.com".
	Origins []string
	Logger  *slog.Logger
}

// NewToken returns a random bearer token of 256 bits.
func NewToken() string { return rand.Text() + rand.Text() }

// Handler serves MCP's Streamable HTTP transport at Path, through the SDK:
// sessions, an SSE stream per request and a standalone one, and resumption
// of a broken stream from Last-Event-ID out of an in-memory event store.
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
	stream := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			return prototype
		}
		return h.Server()
	}, &sdk.StreamableHTTPOptions{
		EventStore:     sdk.NewMemoryEventStore(nil),
		SessionTimeout: sessionIdle,
		Logger:         opts.Logger,
	})
	mux := http.NewServeMux()
	mux.Handle(Path, requireToken(opts.Token, stream))
	return checkOrigin(opts.Origins, mux)
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
