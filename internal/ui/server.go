// Package ui is acolyte's local web page (`acolyte ui`): one person, on
// their own machine, browsing and curating the memories their checkout
// sees. Every read and write goes through the memory.Toolkit the CLI
// drives, so a search ranks as `acolyte search` does and an edit passes
// the same guards (secrets, size, the .acolyte/ writer) and shows in `git
// diff` at once.
//
// The page is served on 127.0.0.1 only, and a local port is open to every
// other program and every web page the browser shows: a page elsewhere
// can post forms to it, and a DNS name rebound to 127.0.0.1 can read it.
// So a request needs the session cookie that the one-time token in the
// printed URL is exchanged for, a Host naming this server, an Origin (when
// the browser sends one, and always on a write) of this server, and on a
// write the form's CSRF token. The page runs no script, loads nothing
// from elsewhere, and says so in its Content-Security-Policy.
package ui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// Config is what the page works on. cmd fills it from the same workspace
// every command opens.
type Config struct {
	// Toolkit is the CLI's toolkit: every search, listing and change goes
	// through it.
	Toolkit memory.Toolkit
	// State keeps the review queue's mark (the local store's state table).
	State State
	// Project is the checkout's root, "" outside a repository.
	Project string
	// Derived says whether a memory is derived from a file (a rule from
	// AGENTS.md, a seed from seeds.json): such a memory is edited there.
	Derived func(memory.Memory) bool
	// Origins says where in the repository each derived memory comes
	// from, by id. Nil outside a repository.
	Origins func(ctx context.Context) (map[string]Origin, error)
	// Stale returns, by id, the paths of those memories that changed or
	// were deleted since the memory was written. Nil outside a repository.
	Stale func(ctx context.Context, mems []memory.Memory) (map[string]Staleness, error)
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// State is where the page keeps its own small records.
type State interface {
	GetState(ctx context.Context, key string) (string, error)
	SetState(ctx context.Context, key, value string) error
}

// Origin is the place in the repository a derived memory's text is.
type Origin struct {
	File string
	Line int
}

// Staleness is what changed of the paths a memory mentions.
type Staleness = memory.Staleness

// Server serves the page. It is made for one listener and one person.
type Server struct {
	cfg     Config
	csrfKey []byte
	pages   *pages

	mu sync.Mutex
	// token is the one-time token of the printed URL, "" once exchanged.
	token string
	// sessions are the cookies handed out for the token.
	sessions map[string]bool
	// hosts are the Host values this server answers to; set by Serve.
	hosts      []string
	cookieName string
}

// New makes a server over cfg with a fresh one-time token.
func New(cfg Config) (*Server, error) {
	if cfg.Toolkit == nil || cfg.State == nil {
		return nil, errors.New("ui: a toolkit and a state store are needed")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Derived == nil {
		cfg.Derived = func(memory.Memory) bool { return false }
	}
	p, err := newPages()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, csrfKey: randomBytes(32), pages: p, token: hex.EncodeToString(randomBytes(24)), sessions: map[string]bool{}}
	s.cookieName = "acolyte-ui"
	return s, nil
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // crypto/rand.Read never fails (Go 1.24 and later)
	return b
}

// Listen opens a free port on 127.0.0.1 (or port, when not 0) and binds
// the server to it.
func (s *Server) Listen(port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listen on 127.0.0.1:%d: %w; pick another --port, or 0 for a free one", port, err)
	}
	s.Bind(ln.Addr())
	return ln, nil
}

// Bind tells the server the address it is reached at, for the Host and
// Origin checks and the cookie's name.
func (s *Server) Bind(addr net.Addr) {
	_, port, _ := net.SplitHostPort(addr.String())
	s.mu.Lock()
	defer s.mu.Unlock()
	// Only the address printed: the cookie is the browser's for that host,
	// and every other name (localhost included) could be rebound.
	s.hosts = []string{"127.0.0.1:" + port}
	// Cookies are not kept apart by port: another local server must not
	// read or overwrite this one's.
	s.cookieName = "acolyte-ui-" + port
}

// URL is the address to open, with the one-time token.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	host := "127.0.0.1"
	if len(s.hosts) > 0 {
		host = s.hosts[0]
	}
	return "http://" + host + "/?token=" + s.token
}

// Serve serves on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		return nil
	}
}

// Handler is the page behind its guards.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /static/{name}", s.static)
	mux.HandleFunc("GET /edit/{id}", s.editForm)
	mux.HandleFunc("POST /edit/{id}", s.edit)
	mux.HandleFunc("GET /forget/{id}", s.forgetForm)
	mux.HandleFunc("POST /forget/{id}", s.forget)
	mux.HandleFunc("GET /review", s.review)
	mux.HandleFunc("POST /review/keep/{id}", s.keep)
	mux.HandleFunc("GET /charts", s.charts)
	mux.HandleFunc("GET /add", s.addForm)
	mux.HandleFunc("POST /add", s.add)
	return s.guard(mux)
}

// securityHeaders go on every answer, refusals included.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer Chromium sends
	// "Origin: null" with the page's own form posts, which guard refuses.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// guard admits a request only from this server's own page, in the
// session the token was exchanged for.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		if !s.knownHost(r.Host) {
			// A DNS name rebound to 127.0.0.1 arrives with its own name.
			refuse(w, http.StatusMisdirectedRequest, "this server answers only to the 127.0.0.1 address it printed; open the URL acolyte ui printed")
			return
		}
		origin := r.Header.Get("Origin")
		if origin != "" && origin != "http://"+r.Host {
			refuse(w, http.StatusForbidden, "a request from another site's page is refused")
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			refuse(w, http.StatusForbidden, "a request from another site's page is refused")
			return
		}
		write := r.Method != http.MethodGet && r.Method != http.MethodHead
		if write && origin == "" {
			// Every browser sends Origin on a form post; a post without one
			// did not come from this page.
			refuse(w, http.StatusForbidden, "a change needs the page's Origin; submit it from the page")
			return
		}
		if tok := r.URL.Query().Get("token"); tok != "" && r.Method == http.MethodGet && r.URL.Path == "/" {
			s.exchange(w, r, tok)
			return
		}
		session, ok := s.session(r)
		if !ok {
			refuse(w, http.StatusUnauthorized, "open the URL acolyte ui printed (its token works once); restart acolyte ui for a new one")
			return
		}
		if write {
			r.Body = http.MaxBytesReader(w, r.Body, 4*memory.MaxContentBytes)
			if err := r.ParseForm(); err != nil {
				refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the form could not be read (%v); a memory holds at most %d bytes", err, memory.MaxContentBytes))
				return
			}
			if !hmac.Equal([]byte(r.PostFormValue("csrf")), []byte(s.csrf(session))) {
				refuse(w, http.StatusForbidden, "the form's CSRF token is missing or wrong; reload the page and submit it again")
				return
			}
		}
		ctx := context.WithValue(r.Context(), sessionKey{}, session)
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, listedKey{}, &listed{})))
	})
}

type sessionKey struct{}

func (s *Server) knownHost(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.hosts {
		if host == h {
			return true
		}
	}
	return false
}

// exchange trades the one-time token for a session cookie and sends the
// browser on without the token in its address bar or history.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request, tok string) {
	s.mu.Lock()
	valid := s.token != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) == 1
	var session string
	if valid {
		s.token = ""
		session = hex.EncodeToString(randomBytes(32))
		s.sessions[session] = true
	}
	name := s.cookieName
	s.mu.Unlock()
	if !valid {
		if _, ok := s.session(r); ok {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		refuse(w, http.StatusUnauthorized, "that token is wrong or was used already; restart acolyte ui for a new one")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) session(r *http.Request) (string, bool) {
	s.mu.Lock()
	name := s.cookieName
	s.mu.Unlock()
	c, err := r.Cookie(name)
	if err != nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.Value, s.sessions[c.Value]
}

// csrf is the form token of a session.
func (s *Server) csrf(session string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte(session))
	return hex.EncodeToString(m.Sum(nil))
}

func refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, "acolyte ui:", msg)
}
