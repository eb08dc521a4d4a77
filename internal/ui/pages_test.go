package ui_test

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/internal/layouttest"
	"github.com/acolyte-dev/acolyte/internal/secrets/secretstest"
	"github.com/acolyte-dev/acolyte/internal/ui"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// hostile is what a clone, a model or a pasted file can put in a memory:
// markup that would run in the page, and terminal escapes (OSC 52 writes
// the clipboard, OSC 8 hides a link, CSI rewrites the screen). A bidi
// override (U+202E) cannot be stored at all any more (memory.Validate).
const hostile = "Deploy notes <script>alert(1)</script> <img src=x onerror=alert(2)> " +
	"\x1b]52;c;cm0gLXJmIH4=\x07 \x1b]8;;http://attacker.example\x1b\\docs\x1b]8;;\x1b\\ \x1b[2Jgnp.exe"

// ids of the memory cards a page shows, in order.
func cardIDs(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<article class="memory" id="m-[^"]*" data-id="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestHostileTextIsShownAsText(t *testing.T) {
	c := newCheckout(t)
	m := c.add(hostile, "ops<b onmouseover=alert(3)>", memory.KindStored, "cli")
	p := serve(t, c.config())
	p.login()
	for _, path := range []string{"/", "/?q=deploy+notes", "/edit/" + m.ID, "/forget/" + m.ID, "/charts"} {
		body := p.get(path)
		for _, raw := range []string{"<script>alert", "<img src=x", "<b onmouseover", "\x1b", "\u202e", "\a"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s holds %q raw", path, raw)
			}
		}
		if path == "/charts" {
			continue
		}
		// The whole text is there, every character of it visible.
		for _, shown := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(2)&gt;",
			`\x1b]52;c;cm0gLXJmIH4=\x07`, `\x1b]8;;http://attacker.example\x1b\docs`, `\x1b[2Jgnp.exe`} {
			if !strings.Contains(body, shown) {
				t.Errorf("%s does not show %q", path, shown)
			}
		}
	}
	// A page holds exactly one script-free document: no <script> tag at all.
	if strings.Contains(strings.ToLower(p.get("/")), "<script") {
		t.Error("the list page has a <script> tag")
	}
}

func TestLongTextIsNeverCut(t *testing.T) {
	c := newCheckout(t)
	long := strings.Repeat("The release checklist has many steps. ", 200) + "The last step is tagging."
	c.add(long, "", memory.KindStored, "cli")
	p := serve(t, c.config())
	p.login()
	if !strings.Contains(p.get("/"), long) {
		t.Fatal("the list does not show the whole text of a long memory")
	}
}

// Edits go through the workspace's toolkit, so they meet the CLI's
// guards, and land in .acolyte/memories.jsonl at once.
func TestEditsMeetTheCLIsGuards(t *testing.T) {
	c := newCheckout(t)
	m := c.add("Staging is reached through bastion-2", "ops", memory.KindStored, "cli")
	p := serve(t, c.config())
	p.login()
	p.formToken(m.ID)
	before := c.file()

	tried := 0
	for _, cred := range secretstest.Credentials {
		fields := []string{"content"}
		if len(cred.Content) <= memory.MaxTopicBytes && !strings.Contains(cred.Content, "\n") {
			fields = append(fields, "topic")
		}
		for _, field := range fields {
			tried++
			form := url.Values{"content": {"Staging is reached through bastion-3"}, "topic": {"ops"}}
			form.Set(field, cred.Content)
			code, body := p.post("/edit/"+m.ID, form)
			if code != http.StatusUnprocessableEntity {
				t.Errorf("%s in the %s: %d, want 422", cred.Kind, field, code)
				continue
			}
			if !strings.Contains(body, "secret") || !strings.Contains(body, field) {
				t.Errorf("%s in the %s: the page does not say why:\n%s", cred.Kind, field, body)
			}
			if strings.Contains(body, cred.Content) || strings.Contains(body, template.HTMLEscapeString(cred.Content)) {
				t.Errorf("%s in the %s: the refusal page holds the credential", cred.Kind, field)
			}
		}
	}
	if tried < 40 {
		t.Fatalf("only %d credentials tried", tried)
	}
	if after := c.file(); after != before {
		t.Fatalf("a refused edit changed .acolyte/memories.jsonl:\n%s", after)
	}
	code, body := p.post("/edit/"+m.ID, url.Values{"content": {strings.Repeat("x", memory.MaxContentBytes+1)}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "too large") {
		t.Fatalf("an edit over the size limit: %d", code)
	}
	code, body = p.post("/edit/"+m.ID, url.Values{"content": {strings.Repeat("ü", memory.MaxContentBytes)}})
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "at most 8192 bytes") {
		t.Fatalf("a form far over the size limit: %d %s", code, body)
	}
	code, _ = p.post("/edit/"+m.ID, url.Values{"content": {"  "}})
	if code != http.StatusUnprocessableEntity || c.file() != before {
		t.Fatalf("an empty edit: %d", code)
	}

	code, body = p.post("/edit/"+m.ID, url.Values{"content": {"Staging is reached through bastion-3, see docs/deploy.md"}, "topic": {"ops / staging"}})
	if code != http.StatusSeeOther {
		t.Fatalf("a valid edit: %d %s", code, body)
	}
	file := c.file()
	if !strings.Contains(file, `"content":"Staging is reached through bastion-3, see docs/deploy.md","topic":"ops / staging"`) || strings.Contains(file, "bastion-2") {
		t.Fatalf("the edit is not in .acolyte/memories.jsonl:\n%s", file)
	}
	if !strings.Contains(file, `"paths":["docs/deploy.md"]`) {
		t.Errorf("the edit's paths were not recorded as the CLI records them:\n%s", file)
	}
	git(t, c.root, "diff", "--exit-code", "--quiet", "HEAD", "--", "AGENTS.md") // untouched
}

// A rule is derived from AGENTS.md: the page sends the person to its line
// and offers no edit that the next sync would undo; posting one anyway is
// refused by the toolkit.
func TestARuleIsEditedInItsFile(t *testing.T) {
	c := newCheckout(t)
	p := serve(t, c.config())
	p.login()
	body := p.get("/?kind=rule")
	ids := cardIDs(body)
	if len(ids) != 3 {
		t.Fatalf("rules listed: %v", ids)
	}
	if !strings.Contains(body, "a rule from AGENTS.md, line 12, under the heading Style/Go") ||
		!strings.Contains(body, "Edit <code>AGENTS.md</code> line 5, then run <code>acolyte sync</code>") {
		t.Fatalf("the rules do not say where to edit them:\n%s", body)
	}
	if strings.Contains(body, `href="/edit/`) || strings.Contains(body, `href="/forget/`) {
		t.Error("a rule is offered an edit or forget")
	}
	// Its heading links to every memory filed under it.
	if !strings.Contains(body, `<a class="topic" href="/?topic=style%20%2f%20go"`) {
		t.Errorf("the rule's heading is not a link to its topic:\n%s", body)
	}
	if ids := cardIDs(p.get("/?topic=style%20%2f%20go")); len(ids) != 1 {
		t.Errorf("the heading's link shows %v", ids)
	}
	before := c.file()
	p.csrf = csrfOf(t, p.get("/forget/"+ids[0]))
	if code, body := p.post("/forget/"+ids[0], url.Values{}); code != http.StatusUnprocessableEntity || !strings.Contains(body, "derived from AGENTS.md") {
		t.Fatalf("forgetting a rule: %d %s", code, body)
	}
	if code, _ := p.post("/edit/"+ids[0], url.Values{"content": {"Never run the tests."}}); code != http.StatusUnprocessableEntity {
		t.Fatalf("editing a rule: %d", code)
	}
	if c.file() != before {
		t.Fatal("a refused change to a rule changed the memories file")
	}
}

// The page's search is the CLI's: the same toolkit, the same order and
// scores, and each result says which of the query's words it holds.
func TestSearchRanksAsTheCLI(t *testing.T) {
	c := newCheckout(t)
	c.add("The staging database is reached through bastion-2", "ops", memory.KindStored, "cli")
	c.add("Production deploys need two approvals", "ops", memory.KindStored, "cli")
	c.add("Espresso beans are in the kitchen cupboard", "", memory.KindStored, "cli")
	p := serve(t, c.config())
	p.login()
	const q = "how do I reach the staging db"
	want, err := c.ws.Search(t.Context(), memory.Query{Text: q, Filter: memory.Filter{Limit: memory.MaxLimit}})
	if err != nil || len(want) == 0 {
		t.Fatalf("toolkit search: %v %v", want, err)
	}
	body := p.get("/?q=" + url.QueryEscape(q))
	var wantIDs []string
	for _, r := range want {
		wantIDs = append(wantIDs, r.ID)
		if !strings.Contains(body, fmt.Sprintf("score %.3f", r.Score)) {
			t.Errorf("the page does not show %s's score %.3f", r.ID, r.Score)
		}
	}
	if got := cardIDs(body); !slices.Equal(got, wantIDs) {
		t.Fatalf("page order %v, toolkit order %v", got, wantIDs)
	}
	if !strings.Contains(body, "words: reach, staging, db (kin)") {
		t.Errorf("the best result does not say which words it holds:\n%s", body)
	}
	// A search that holds none of the query's words was brought by meaning.
	body = p.get("/?q=" + url.QueryEscape("coffee"))
	if ids := cardIDs(body); len(ids) > 0 && !strings.Contains(body, "meaning: holds none of the query") {
		t.Errorf("a result found by meaning alone does not say so:\n%s", body)
	}
	// A query the CLI refuses is refused here with its message.
	req, _ := http.NewRequest("GET", p.base+"/?kind=fact", nil)
	if code, body := p.do(req); code != http.StatusBadRequest || !strings.Contains(body, `unknown kind &#34;fact&#34;: use one of stored, observation, rule, seed`) {
		t.Errorf("an unknown kind: %d", code)
	}
}

func TestFiltersNarrowTheList(t *testing.T) {
	c := newCheckout(t)
	main := c.add("The entry point is src/main.go", "code / layout", memory.KindStored, "cli")
	docs := c.add("Deploy steps are written up in docs/deploy.md", "ops", memory.KindStored, "mcp")
	obs := c.add("The user runs tests with -race", "testing", memory.KindObservation, "distill")
	// src/main.go changes after the memory citing it was written.
	writeFile(t, c.root, "src/main.go", "package main\n\nfunc main() {}\n")
	if _, err := c.ws.Add(t.Context(), memory.Draft{Content: "I prefer short commit messages", Scope: memory.ScopeUser, Kind: memory.KindStored, Source: "cli"}); err != nil {
		t.Fatal(err)
	}
	p := serve(t, c.config())
	p.login()
	count := func(query string) []string {
		t.Helper()
		return cardIDs(p.get("/?" + query))
	}
	if got := count(""); len(got) != 7 {
		t.Fatalf("everything: %d cards, want 7 (3 rules, 3 project, 1 user)", len(got))
	}
	if got := count("scope=user"); len(got) != 1 {
		t.Errorf("scope=user: %v", got)
	}
	if got := count("kind=observation"); !slices.Equal(got, []string{obs.ID}) {
		t.Errorf("kind=observation: %v", got)
	}
	if got := count("topic=code"); !slices.Equal(got, []string{main.ID}) {
		t.Errorf("topic=code (keeps code / layout): %v", got)
	}
	if got := count("topic=style"); len(got) != 1 {
		t.Errorf("topic=Style (keeps the rule under Style / Go): %v", got)
	}
	if got := count("path=" + url.QueryEscape("src/**")); !slices.Equal(got, []string{main.ID}) {
		t.Errorf("path=src/**: %v", got)
	}
	if got := count("path=" + url.QueryEscape("**/*.md")); !slices.Equal(got, []string{docs.ID}) {
		t.Errorf("path=**/*.md: %v", got)
	}
	if got := count("source=mcp"); !slices.Equal(got, []string{docs.ID}) {
		t.Errorf("source=mcp: %v", got)
	}
	if got := count("source=AGENTS.md"); len(got) != 3 {
		t.Errorf("source=AGENTS.md: %v", got)
	}
	body := p.get("/?stale=1")
	if got := cardIDs(body); !slices.Equal(got, []string{main.ID}) {
		t.Errorf("stale=1: %v", got)
	}
	if !strings.Contains(body, "<code>src/main.go</code> changed") {
		t.Errorf("the stale memory does not say what changed:\n%s", body)
	}
	if got := count("q=tests&kind=observation"); !slices.Equal(got, []string{obs.ID}) {
		t.Errorf("a search within a kind: %v", got)
	}
	// The topic tree nests the headings and counts what is beneath each.
	tree := p.get("/")
	if !regexp.MustCompile(`topic=style">style</a> <span class="n">1</span><ul><li><a href="/\?topic=style&#43;%2F&#43;go">go</a>`).MatchString(tree) {
		t.Errorf("the topic tree does not nest Style / Go:\n%s", tree)
	}
}

func TestPagesHoldFiftyMemories(t *testing.T) {
	c := newCheckout(t)
	for i := range 117 {
		c.add(fmt.Sprintf("Fact number %d about the build", i), "", memory.KindStored, "cli")
	}
	p := serve(t, c.config())
	p.login()
	first := p.get("/")
	if n := len(cardIDs(first)); n != 50 || !strings.Contains(first, "120 memories, page 1 of 3") {
		t.Fatalf("page 1: %d cards", n)
	}
	if !strings.Contains(first, "Fact number 116 about") || strings.Contains(first, "Fact number 0 about") {
		t.Error("page 1 is not the newest memories")
	}
	if n := len(cardIDs(p.get("/?page=3"))); n != 20 {
		t.Fatalf("page 3: %d cards, want 20", n)
	}
	if n := len(cardIDs(p.get("/?page=99"))); n != 20 {
		t.Fatalf("a page past the end shows the last: %d cards", n)
	}
}

// The review queue holds the observations distill added since the last
// review; keep, edit and forget each take one off it.
func TestTheReviewQueue(t *testing.T) {
	c := newCheckout(t)
	first := c.add("The user runs tests with -race", "testing", memory.KindObservation, "distill")
	second := c.add("CI caches the Go module download", "ci", memory.KindObservation, "distill")
	third := c.add("The parser rejects empty files on purpose", "", memory.KindObservation, "distill")
	c.add("Not an observation", "", memory.KindStored, "cli")
	p := serve(t, c.config())
	p.login()
	body := p.get("/review")
	if got := cardIDs(body); !slices.Equal(got, []string{first.ID, second.ID, third.ID}) {
		t.Fatalf("queue %v", got)
	}
	if !strings.Contains(body, "distilled by the agent after a task") {
		t.Error("the queue does not say where its observations came from")
	}
	p.csrf = csrfOf(t, body)
	if code, _ := p.post("/review/keep/"+first.ID, url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("keep: %d", code)
	}
	if code, _ := p.post("/edit/"+second.ID, url.Values{"content": {"CI caches the Go module and build caches"}, "review": {"1"}, "return": {"/review"}}); code != http.StatusSeeOther {
		t.Fatalf("edit from the queue: %d", code)
	}
	if code, _ := p.post("/forget/"+third.ID, url.Values{"return": {"/review"}}); code != http.StatusSeeOther {
		t.Fatalf("forget from the queue: %d", code)
	}
	file := c.file()
	if !strings.Contains(file, first.Content) || !strings.Contains(file, "CI caches the Go module and build caches") || strings.Contains(file, third.Content) {
		t.Fatalf("after keep, edit and forget:\n%s", file)
	}
	if got := cardIDs(p.get("/review")); len(got) != 0 {
		t.Fatalf("the queue after reviewing everything: %v", got)
	}
	// A new observation joins the queue; the reviewed ones do not return,
	// even for a new server (the mark is in the store).
	fourth := c.add("Releases are tagged from main", "", memory.KindObservation, "distill")
	p = serve(t, c.config())
	p.login()
	if got := cardIDs(p.get("/review")); !slices.Equal(got, []string{fourth.ID}) {
		t.Fatalf("the next queue: %v, want only the new observation", got)
	}
}

func TestChartsCountWhatIsThere(t *testing.T) {
	c := newCheckout(t)
	c.add("The user runs tests with -race", "testing", memory.KindObservation, "distill")
	if _, err := c.ws.Search(t.Context(), memory.Query{Text: "run make test"}); err != nil {
		t.Fatal(err)
	}
	p := serve(t, c.config())
	p.login()
	body := p.get("/charts")
	for _, want := range []string{"<h1>4 memories</h1>", `<title>Memories by kind</title>`, `class="count">3</text>`, `<title>Memories added per week</title>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the charts lack %q", want)
		}
	}
	recent, _, _ := strings.Cut(body[strings.Index(body, "Recalled most recently"):], "Recalled longest ago")
	if !strings.Contains(recent, "Run make test before pushing.") {
		t.Errorf("the rule just found is not among the most recently recalled:\n%s", recent)
	}
}

// ui is a page over the toolkit: it links no engine and no git, which cmd
// hands it.
func TestUIImportsNoEngineNorGit(t *testing.T) {
	for _, pkg := range layouttest.Deps(t) {
		if strings.HasPrefix(pkg, layouttest.Module) && !slices.Contains([]string{"memory", "internal/ui", "internal/termtext"}, strings.TrimPrefix(pkg, layouttest.Module)) {
			t.Errorf("internal/ui builds on %s", pkg)
		}
		if strings.Contains(pkg, "sqlite") || strings.Contains(pkg, "go-git") || strings.Contains(pkg, "pgx") {
			t.Errorf("internal/ui builds on %s", pkg)
		}
	}
}

func TestNoPageLoadsAnythingFromElsewhere(t *testing.T) {
	err := filepath.WalkDir("assets", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if regexp.MustCompile(`(?i)(src|href)="(https?:)?//|@import|url\(`).Match(b) {
			t.Errorf("%s refers to something outside the binary", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Outside a repository the page shows user memories, and edits them
// through the same guard.
func TestOutsideARepository(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "acolyte.db"), static.New())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tk := memory.Scoped{Store: s, Guard: gitsync.RefuseSecret}
	added, err := tk.Add(t.Context(), memory.Draft{Content: "I prefer table-driven tests", Scope: memory.ScopeUser, Kind: memory.KindStored, Source: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	p := serve(t, ui.Config{Toolkit: tk, State: s})
	p.login()
	if body := p.get("/"); !strings.Contains(body, "I prefer table-driven tests") || !strings.Contains(body, "no repository") {
		t.Fatalf("the list outside a repository:\n%s", body)
	}
	p.formToken(added.Memory.ID)
	if code, _ := p.post("/edit/"+added.Memory.ID, url.Values{"content": {"my token is gh" + "p_kJGcW3ALRUn542ysZySZeuFiEXpVdE58zHYp"}}); code != http.StatusUnprocessableEntity {
		t.Fatalf("a credential in a user memory: %d", code)
	}
	if code, _ := p.post("/edit/"+added.Memory.ID, url.Values{"content": {"I prefer table-driven tests with t.Run"}}); code != http.StatusSeeOther {
		t.Fatalf("an edit: %d", code)
	}
	if got, _ := tk.List(t.Context(), memory.Filter{}); len(got) != 1 || got[0].Content != "I prefer table-driven tests with t.Run" {
		t.Fatalf("after the edit: %+v", got)
	}
}

// Issue 36: the page shows where a memory applies, finds the memories
// scoped to a folder by the path filter, counts one memory as one, says
// where each card on the charts came from, and reads the forget
// confirmation as a sentence.
func TestPathScopesShowAndFilter(t *testing.T) {
	c := newCheckout(t)
	writeFile(t, c.root, "internal/db/pool.go", "package db\n")
	add := func(content string, globs ...string) memory.Memory {
		t.Helper()
		added, err := c.ws.Add(t.Context(), memory.Draft{Content: content, Scope: memory.ScopeProject, Kind: memory.KindStored, Source: "cli", Globs: globs})
		if err != nil {
			t.Fatal(err)
		}
		return added.Memory
	}
	exact := add("Queries go through the sqlc-generated package", "internal/db/**")
	deeper := add("Every migration file has a down step", "internal/db/migrations/*.sql")
	wider := add("Packages under internal never import cmd", "internal/**")
	mentions := add("The pool size is set in internal/db/pool.go")
	always := add("Answer in British English", memory.AlwaysGlob)
	elsewhere := add("Components keep a CSS module beside them", "web/components/**")
	p := serve(t, c.config())
	p.login()

	body := p.get("/?path=" + url.QueryEscape("internal/db/**"))
	got := cardIDs(body)
	for _, m := range []memory.Memory{exact, deeper, wider, mentions} {
		if !slices.Contains(got, m.ID) {
			t.Errorf("the path filter internal/db/** does not list %q", m.Content)
		}
	}
	for _, m := range []memory.Memory{always, elsewhere} {
		if slices.Contains(got, m.ID) {
			t.Errorf("the path filter internal/db/** lists %q", m.Content)
		}
	}
	if !strings.Contains(body, "<dt>applies to</dt><dd class=\"globs\"><code>internal/db/**</code> </dd>") {
		t.Errorf("a card does not show its globs:\n%s", body)
	}
	if all := p.get("/"); !strings.Contains(all, "every file") {
		t.Errorf("the memory for every file does not say so")
	}

	if strings.Contains(p.get("/?path="+url.QueryEscape("web/**")), "1 memories") {
		t.Errorf("the page says 1 memories")
	}
	if b := p.get("/?path=" + url.QueryEscape("web/**")); !strings.Contains(b, `id="summary">1 memory<`) {
		t.Errorf("the summary of one memory:\n%s", b)
	}

	if _, err := c.ws.Search(t.Context(), memory.Query{Text: "sqlc generated package"}); err != nil {
		t.Fatal(err)
	}
	charts := p.get("/charts")
	if strings.Contains(charts, `<dd class="from"></dd>`) {
		t.Errorf("a card on the charts has an empty from row")
	}
	if !strings.Contains(charts, "acolyte remember, on the command line") {
		t.Errorf("the charts' cards do not say where they came from")
	}

	forget := p.get("/forget/" + exact.ID)
	if !strings.Contains(forget, "It is removed from <code>.acolyte/memories.jsonl</code>, and a tombstone in <code>.acolyte/forgotten.jsonl</code> keeps a merge from bringing it back.") {
		t.Errorf("the forget confirmation:\n%s", forget)
	}
}

// The page adds a memory as acolyte remember does: with its globs, to the
// project's file, through the same checks (a credential is refused and
// not sent back; a bad glob is refused by what is wrong).
func TestAddAMemoryWithItsGlobs(t *testing.T) {
	c := newCheckout(t)
	p := serve(t, c.config())
	p.login()
	form := p.get("/add")
	if !strings.Contains(form, `name="globs"`) || !strings.Contains(form, "<option selected>project</option>") {
		t.Fatalf("the add form:\n%s", form)
	}
	code, body := p.post("/add", url.Values{"csrf": {csrfOf(t, form)}, "content": {"Never edit a merged migration; add a new one"},
		"topic": {"db"}, "scope": {"project"}, "globs": {"migrations/**\n  db/migrations/**  \n"}})
	if code != http.StatusSeeOther {
		t.Fatalf("add: %d\n%s", code, body)
	}
	if f := c.file(); !strings.Contains(f, `"content":"Never edit a merged migration; add a new one"`) || !strings.Contains(f, `"globs":["db/migrations/**","migrations/**"]`) {
		t.Errorf(".acolyte/memories.jsonl after the add:\n%s", f)
	}
	res, err := c.ws.Search(t.Context(), memory.Query{Text: "how do I change this", Paths: []string{"migrations/0042.sql"}})
	if err != nil || len(res) == 0 || !strings.Contains(res[0].Memory.Content, "merged migration") {
		t.Errorf("search --path does not rank the added memory first: %v %+v", err, res)
	}
	list := p.get("/?path=" + url.QueryEscape("migrations/**"))
	if !strings.Contains(list, "added in acolyte ui") || !strings.Contains(list, "<code>migrations/**</code>") {
		t.Errorf("the list does not show the added memory's source and globs:\n%s", list)
	}

	secret := "The deploy key is AKIA" + "QX7NR3JTMB2W5KPL"
	code, body = p.post("/add", url.Values{"csrf": {csrfOf(t, form)}, "content": {secret}, "scope": {"project"}})
	if code != http.StatusUnprocessableEntity || strings.Contains(body, "QX7NR3JTMB2W5KPL") || strings.Contains(c.file(), "QX7NR3JTMB2W5KPL") {
		t.Errorf("a credential: %d, echoed or stored\n%s", code, body)
	}
	code, body = p.post("/add", url.Values{"csrf": {csrfOf(t, form)}, "content": {"A rule for bad globs"}, "scope": {"project"}, "globs": {"src/[a-"}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "invalid path glob") {
		t.Errorf("a bad glob: %d\n%s", code, body)
	}
	code, _ = p.post("/add", url.Values{"content": {"No token"}, "scope": {"project"}})
	if code != http.StatusForbidden {
		t.Errorf("an add without the form's CSRF token: %d, want 403", code)
	}
}

// The edit page changes the files a memory applies to, in the project's
// file, and refuses a bad glob by what is wrong.
func TestEditAMemorysGlobs(t *testing.T) {
	c := newCheckout(t)
	added, err := c.ws.Add(t.Context(), memory.Draft{Content: "Never edit a merged migration", Scope: memory.ScopeProject, Kind: memory.KindStored, Source: "cli", Globs: []string{"db/**"}})
	if err != nil {
		t.Fatal(err)
	}
	m := added.Memory
	p := serve(t, c.config())
	p.login()
	form := p.get("/edit/" + m.ID)
	if !strings.Contains(form, `<textarea name="globs" rows="3" placeholder="migrations/**">db/**</textarea>`) {
		t.Fatalf("the edit form does not hold the globs:\n%s", form)
	}
	post := func(globs string) (int, string) {
		return p.post("/edit/"+m.ID, url.Values{"csrf": {csrfOf(t, form)}, "content": {m.Content}, "topic": {""}, "globs": {globs}, "set_globs": {"1"}})
	}
	if code, body := post("migrations/**\ndb/migrations/**\n"); code != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", code, body)
	}
	if f := c.file(); !strings.Contains(f, `"globs":["db/migrations/**","migrations/**"]`) {
		t.Errorf(".acolyte/memories.jsonl after the edit:\n%s", f)
	}
	if code, body := post("src/[a-"); code != http.StatusUnprocessableEntity || !strings.Contains(body, "invalid path glob") {
		t.Errorf("a bad glob: %d\n%s", code, body)
	}
	if code, _ := post(""); code != http.StatusSeeOther || strings.Contains(c.file(), `"globs"`) {
		t.Errorf("clearing the globs: %d\n%s", code, c.file())
	}
}
