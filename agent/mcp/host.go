package mcp

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

// Binding is the memory one session serves: a repository's, with the
// user's and the team's, or the user's alone outside any repository.
type Binding struct {
	Toolkit memory.Toolkit
	// Stale, when set, marks memory_search results whose cited files
	// changed since they were written (toolbox.MemoryConfig.Stale).
	Stale memory.StaleFunc
	// Root is the repository's working tree, or the directory served when
	// it is in none.
	Root string
}

// Opener opens the memory for a directory a client announced as a root.
// A directory in no repository is no error: its binding serves user memory.
type Opener func(ctx context.Context, dir string) (Binding, error)

// rootsTimeout bounds the wait for a client's answer to roots/list; a
// client that never answers is served its default binding.
const rootsTimeout = 10 * time.Second

// ProtocolVersions returns the MCP revisions served, newest first. The SDK
// also speaks 2026-07-28, which deprecates roots (SEP-2577) and lets a
// server ask for them only through multi round-trip tool results
// (SEP-2322); acolyte chooses the repository by roots, so it stops at
// 2025-11-25, the revision the conformance suite checks. A newer client
// is answered with 2025-11-25 and speaks that.
func ProtocolVersions() []string {
	return []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

// Host makes one server per MCP session, all sharing one gate, so that
// sessions over HTTP take turns on the same files and database as the
// tools of one session do.
type Host struct {
	def  Binding
	opts Options
	gate *gate
}

// NewHost serves tk to every session until, with opts.Open set, the
// session's client names its roots.
func NewHost(tk memory.Toolkit, opts Options) *Host {
	return &Host{def: Binding{Toolkit: tk, Root: opts.Root, Stale: opts.Stale}, opts: opts, gate: newGate(opts.BeforeCall)}
}

// session is one server's state: the binding it serves, and whether the
// client's roots must be read again before the next request.
type session struct {
	host   *Host
	server *sdk.Server

	mu         sync.Mutex // held while the binding changes
	bound      Binding
	rootsStale bool
}

// Server returns a new server for one session.
func (h *Host) Server() *sdk.Server {
	s := &session{host: h, bound: h.def}
	sopts := serverOptions(h.opts)
	if h.opts.Open != nil {
		// The roots are read on the session's first request, and on the
		// next after each change, rather than in the notifications'
		// handlers: over HTTP a server's request reaches the client on the
		// stream of the client's own request, which a notification has
		// not got. Nor is the initialized notification awaited: over stdio
		// the SDK may run the client's first call before it.
		s.rootsStale = true
		//lint:ignore SA1019 roots are deprecated from MCP 2026-07-28, which acolyte does not serve (ProtocolVersions); they bind a session to its repository
		sopts.RootsListChangedHandler = func(context.Context, *sdk.RootsListChangedRequest) { s.markStale() }
	}
	s.server = sdk.NewServer(implementation(h.opts), sopts)
	if h.opts.Open != nil {
		s.server.AddReceivingMiddleware(s.followRoots)
	}
	s.addTools(s.bound)
	s.server.AddResource(&sdk.Resource{
		URI:         StatusURI,
		Name:        "status",
		Title:       "acolyte memory status",
		Description: "How many memories are visible here, by scope and kind; the repository root and the embedder model.",
		MIMEType:    "application/json",
	}, s.statusHandler())
	return s.server
}

func (s *session) markStale() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rootsStale = true
}

// addTools serves b's tools, replacing those of the binding before: the
// SDK tells the client the list changed, and the schemas now say which
// scopes exist there and which is the default.
func (s *session) addTools(b Binding) {
	addTools(s.server, s.host.gate, toolbox.MemoryConfig{Toolkit: b.Toolkit, Source: SourceMCP, Stale: b.Stale}.Tools())
}

// binding is what the session serves now.
func (s *session) binding() Binding {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bound
}

// followRoots reads the client's roots before the first request that uses
// memory and again after each notifications/roots/list_changed, and
// rebinds the session to them.
func (s *session) followRoots(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/list", "tools/call", "resources/read":
			if ss, ok := req.GetSession().(*sdk.ServerSession); ok {
				s.refreshRoots(ctx, ss)
			}
		}
		return next(ctx, method, req)
	}
}

func (s *session) refreshRoots(ctx context.Context, ss *sdk.ServerSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := ss.InitializeParams()
	if !s.rootsStale || p == nil {
		return // nothing changed, or not initialized yet
	}
	s.rootsStale = false
	//lint:ignore SA1019 roots are deprecated from MCP 2026-07-28, which acolyte does not serve (ProtocolVersions); they bind a session to its repository
	if p.Capabilities == nil || p.Capabilities.RootsV2 == nil {
		return // the client has no roots: serve the default
	}
	ctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	//lint:ignore SA1019 roots are deprecated from MCP 2026-07-28, which acolyte does not serve (ProtocolVersions); they bind a session to its repository
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		s.warn("could not read the client's roots, serving %s: %v", s.bound.Root, err)
		return
	}
	b, err := s.choose(ctx, res.Roots)
	if err != nil {
		s.warn("%v; serving %s", err, s.bound.Root)
		return
	}
	if b.Root == s.bound.Root {
		return // toolkits may hold funcs, so they are told apart by root
	}
	s.bound = b
	s.addTools(b)
}

// choose picks the first root inside a repository; when none is, the
// first root's binding, which serves user memory. No roots at all keeps
// the default: a client with an empty workspace is where it was started.
//
//lint:ignore SA1019 roots are deprecated from MCP 2026-07-28, which acolyte does not serve (ProtocolVersions); they bind a session to its repository
func (s *session) choose(ctx context.Context, roots []*sdk.Root) (Binding, error) {
	var first *Binding
	var errs []string
	for _, r := range roots {
		dir, err := rootDir(r.URI)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		b, err := s.host.opts.Open(ctx, dir)
		if err != nil {
			errs = append(errs, fmt.Sprintf("root %s: %v", dir, err))
			continue
		}
		if inRepository(b.Toolkit) {
			return b, nil
		}
		if first == nil {
			first = &b
		}
	}
	if first != nil {
		return *first, nil
	}
	if len(errs) > 0 {
		return Binding{}, fmt.Errorf("no usable root: %s", strings.Join(errs, "; "))
	}
	return s.host.def, nil
}

func inRepository(tk memory.Toolkit) bool {
	return memory.DefaultScope(tk) == memory.ScopeProject
}

// rootDir is the local directory of a file:// root URI.
func rootDir(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("root %q is not a file:// URI", uri)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("root %q is on host %q, not this machine", uri, u.Host)
	}
	p := u.Path
	if runtime.GOOS == "windows" {
		p = strings.TrimPrefix(p, "/") // file:///C:/src
	}
	return filepath.FromSlash(p), nil
}

func (s *session) warn(format string, args ...any) {
	if s.host.opts.Logger != nil {
		s.host.opts.Logger.Warn(fmt.Sprintf(format, args...))
	}
}
