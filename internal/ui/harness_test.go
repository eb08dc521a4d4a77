package ui_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/internal/ui"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// checkout is a real git repository with a real store and workspace, as
// `acolyte ui` opens them.
type checkout struct {
	t    testing.TB
	root string
	repo *gitsync.Repo
	ws   *gitsync.Checkout
	s    *sqlite.Store
}

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
}

func writeFile(t testing.TB, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const agentsMD = "# Rules\n\n## Testing\n\n- Run make test before pushing.\n- Integration tests need docker compose up db first.\n\n## Style\n\n### Go\n\n- Wrap errors with %w.\n"

func newCheckout(t *testing.T) *checkout {
	t.Helper()
	root := t.TempDir()
	git(t, root, "init", "-q", "-b", "main")
	writeFile(t, root, "AGENTS.md", agentsMD)
	writeFile(t, root, "src/main.go", "package main\n")
	writeFile(t, root, "docs/deploy.md", "deploy\n")
	git(t, root, "add", ".")
	git(t, root, "commit", "-q", "-m", "init")
	repo, err := gitsync.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "acolyte.db"), static.New())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ws := gitsync.NewCheckout(repo, s, "")
	if _, err := ws.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &checkout{t: t, root: repo.Root, repo: repo, ws: ws, s: s}
}

func (c *checkout) add(content, topic string, kind memory.Kind, source string) memory.Memory {
	c.t.Helper()
	added, err := c.ws.Add(c.t.Context(), memory.Draft{Content: content, Topic: topic, Scope: memory.ScopeProject, Kind: kind, Source: source})
	if err != nil {
		c.t.Fatal(err)
	}
	return added.Memory
}

// file is .acolyte/memories.jsonl as it is on disk now.
func (c *checkout) file() string {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.root, ".acolyte", "memories.jsonl"))
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b)
}

// config is what cmd's uiConfig makes of the same workspace.
func (c *checkout) config() ui.Config {
	return ui.Config{
		Toolkit: c.ws, State: c.s, Project: c.root, Derived: derive.IsDerived,
		Origins: func(context.Context) (map[string]ui.Origin, error) {
			d, err := derive.Worktree(c.root)
			out := map[string]ui.Origin{}
			for id, o := range d.Origins {
				out[id] = ui.Origin{File: o.File, Line: o.Line}
			}
			return out, err
		},
		Stale: c.repo.StaleByID,
	}
}

// page is the server on a real loopback listener, and a browser-like
// client that exchanged the token for the cookie.
type page struct {
	t      testing.TB
	srv    *ui.Server
	base   string
	host   string
	client *http.Client
	csrf   string
}

func serve(t testing.TB, cfg ui.Config) *page {
	t.Helper()
	srv, err := ui.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv.Handler())
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	jar, _ := cookiejar.New(nil)
	p := &page{t: t, srv: srv, base: "http://" + ln.Addr().String(), host: ln.Addr().String(),
		client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	return p
}

// login opens the printed URL as a person would.
func (p *page) login() {
	p.t.Helper()
	resp, err := p.client.Get(p.srv.URL())
	if err != nil {
		p.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		p.t.Fatalf("opening the printed URL: %s", resp.Status)
	}
}

// formToken reads the CSRF token from the forget form of memory id, as
// the browser has it.
func (p *page) formToken(id string) string {
	p.t.Helper()
	p.csrf = csrfOf(p.t, p.get("/forget/"+id))
	return p.csrf
}

func (p *page) do(req *http.Request) (int, string) {
	p.t.Helper()
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

func (p *page) get(path string) string {
	p.t.Helper()
	req, _ := http.NewRequest("GET", p.base+path, nil)
	code, body := p.do(req)
	if code != http.StatusOK {
		p.t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return body
}

// post submits a form as the page's own form would: same Origin, the
// session's CSRF token.
func (p *page) post(path string, form url.Values) (int, string) {
	p.t.Helper()
	if form.Get("csrf") == "" && p.csrf != "" {
		form.Set("csrf", p.csrf)
	}
	req, _ := http.NewRequest("POST", p.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", p.base)
	return p.do(req)
}

// csrfOf reads the CSRF token a page's form carries.
func csrfOf(t testing.TB, body string) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the page has no CSRF field:\n%s", body)
	}
	return m[1]
}
