package ui_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// The printed token opens one browser session, once; nothing else does.
func TestTheTokenOpensOneSessionOnce(t *testing.T) {
	c := newCheckout(t)
	p := serve(t, c.config())

	req, _ := http.NewRequest("GET", p.base+"/", nil)
	if code, body := p.do(req); code != http.StatusUnauthorized || strings.Contains(body, "Run make test") {
		t.Fatalf("without the token: %d %s", code, body)
	}
	req, _ = http.NewRequest("GET", p.base+"/?token=00112233445566778899aabbccddeeff0011223344556677", nil)
	if code, _ := p.do(req); code != http.StatusUnauthorized {
		t.Fatalf("a guessed token: %d", code)
	}

	resp, err := p.client.Get(p.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("the printed URL: %s to %q, want a redirect to / that drops the token", resp.Status, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("session cookie %+v: want one HttpOnly, SameSite=Strict cookie", cookies)
	}
	if !strings.Contains(p.get("/"), "Run make test before pushing.") {
		t.Fatal("the session does not show the memories")
	}

	// Someone else who saw the URL (shell history, a screen share) gets
	// nothing from it once it was used.
	other := &http.Client{CheckRedirect: p.client.CheckRedirect}
	resp, err = other.Get(p.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Fatalf("the used token again: %s, cookies %v", resp.Status, resp.Cookies())
	}
	// A forged cookie is no session either.
	req, _ = http.NewRequest("GET", p.base+"/", nil)
	req.AddCookie(&http.Cookie{Name: cookies[0].Name, Value: strings.Repeat("a", len(cookies[0].Value))})
	if resp, err := other.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a forged cookie: %v %v", resp.Status, err)
	}
}

// DNS rebinding: attacker.example resolves to 127.0.0.1 after the page
// loaded, so the browser sends its requests, with the attacker's name in
// Host, to this server. Even with the session cookie (which a rebinding
// page would not have), they are refused.
func TestAnotherHostNameIsRefused(t *testing.T) {
	c := newCheckout(t)
	p := serve(t, c.config())
	p.login()
	_, port, _ := strings.Cut(p.host, ":")
	for _, host := range []string{"attacker.example:" + port, "attacker.example", "127.0.0.1", "127.0.0.1:1", "[::1]:" + port, "localhost.attacker.example:" + port, "localhost:" + port} {
		req, _ := http.NewRequest("GET", p.base+"/", nil)
		req.Host = host
		code, body := p.do(req)
		if code != http.StatusMisdirectedRequest || strings.Contains(body, "Run make test") {
			t.Errorf("Host %s: %d, want 421 and no memories", host, code)
		}
	}
	if !strings.Contains(p.get("/"), "Run make test") {
		t.Error("the printed address itself is refused")
	}
}

// A page on another site posts a form to the server: the browser sends
// its own Origin. Every such write is refused and nothing changes.
func TestWritesFromAnotherSiteAreRefused(t *testing.T) {
	c := newCheckout(t)
	m := c.add("Staging is reached through bastion-2", "", memory.KindStored, "cli")
	p := serve(t, c.config())
	p.login()
	token := p.formToken(m.ID)
	before := c.file()

	attacks := []struct {
		name    string
		headers map[string]string
		csrf    string
	}{
		{"a foreign Origin", map[string]string{"Origin": "http://attacker.example"}, token},
		{"a look-alike Origin", map[string]string{"Origin": p.base + ".attacker.example"}, token},
		{"an Origin on another port", map[string]string{"Origin": "http://127.0.0.1:1"}, token},
		{"a sandboxed frame's null Origin", map[string]string{"Origin": "null"}, token},
		{"no Origin at all", map[string]string{}, token},
		{"cross-site fetch metadata", map[string]string{"Origin": p.base, "Sec-Fetch-Site": "cross-site"}, token},
		{"a missing CSRF token", map[string]string{"Origin": p.base}, ""},
		{"a wrong CSRF token", map[string]string{"Origin": p.base}, strings.Repeat("0", len(token))},
		{"another session's CSRF token", map[string]string{"Origin": p.base}, "x" + token[1:]},
	}
	for _, a := range attacks {
		for _, path := range []string{"/forget/" + m.ID, "/edit/" + m.ID, "/review/keep/" + m.ID, "/add"} {
			form := url.Values{"content": {"Staging is reached through attacker-1"}, "scope": {"project"}}
			if a.csrf != "" {
				form.Set("csrf", a.csrf)
			}
			req, _ := http.NewRequest("POST", p.base+path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range a.headers {
				req.Header.Set(k, v)
			}
			if code, _ := p.do(req); code != http.StatusForbidden {
				t.Errorf("%s, POST %s: %d, want 403", a.name, path, code)
			}
		}
	}
	if after := c.file(); after != before {
		t.Fatalf("a refused request changed .acolyte/memories.jsonl:\n%s", after)
	}
	// A GET from another site's page (an <img src>, a link) reads nothing.
	req, _ := http.NewRequest("GET", p.base+"/?q=staging", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if code, body := p.do(req); code != http.StatusForbidden || strings.Contains(body, "bastion") {
		t.Errorf("a cross-site GET: %d", code)
	}
	// The page's own form works.
	if code, body := p.post("/forget/"+m.ID, url.Values{"return": {"/"}}); code != http.StatusSeeOther {
		t.Fatalf("the page's own forget: %d %s", code, body)
	}
	if strings.Contains(c.file(), "bastion-2") {
		t.Fatal("the page's own forget left the memory in .acolyte/memories.jsonl")
	}
}

// Every answer tells the browser to run no script and load nothing from
// elsewhere, refusals included.
func TestEveryAnswerCarriesAStrictPolicy(t *testing.T) {
	c := newCheckout(t)
	p := serve(t, c.config())
	for _, path := range []string{"/", "/static/style.css", "/nothing"} {
		resp, err := http.Get(p.base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: Content-Security-Policy %q lacks %s", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") || strings.Contains(csp, "script-src") {
			t.Errorf("%s: Content-Security-Policy %q allows script", path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", path)
		}
	}
}

// The returned-to address after a change stays on this server.
func TestAChangeNeverSendsTheBrowserElsewhere(t *testing.T) {
	c := newCheckout(t)
	m := c.add("Deploys go through CI", "", memory.KindStored, "cli")
	p := serve(t, c.config())
	p.login()
	p.formToken(m.ID)
	for _, ret := range []string{"//attacker.example/", "http://attacker.example/", "/\\attacker.example", "javascript:alert(1)"} {
		code, _ := p.post("/edit/"+m.ID, url.Values{"content": {"Deploys go through CI " + ret}, "return": {ret}})
		if code != http.StatusSeeOther {
			t.Fatalf("edit: %d", code)
		}
	}
	// Browsers drop tabs and newlines from a URL and read \ as /, so
	// each of these is //attacker.example to one (issue 35: /<TAB>/).
	hostile := []string{"//attacker.example/", "/\t/attacker.example", "/\n/attacker.example", "/\r\n/attacker.example",
		"\t//attacker.example", "/\\attacker.example", "/%09/attacker.example", "/\x00/attacker.example", "/\x0b/attacker.example", "/\x7f/attacker.example"}
	for i, ret := range append(hostile, "/?q=deploys") {
		req, _ := http.NewRequest("POST", p.base+"/edit/"+m.ID, strings.NewReader(url.Values{"csrf": {p.csrf}, "content": {fmt.Sprintf("Deploys go through CI, take %d.", i)}, "return": {ret}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", p.base)
		resp, err := p.client.Do(req)
		if err != nil {
			t.Errorf("return %q: %v", ret, err) // a Location Go will not parse, but a browser does
			continue
		}
		resp.Body.Close()
		want := "/"
		if i == len(hostile) {
			want = ret // a path on this server is kept
		}
		if loc := resp.Header.Get("Location"); loc != want {
			t.Errorf("return %q redirected to %q, want %s", ret, loc, want)
		}
	}
}
