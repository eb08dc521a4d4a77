package ui

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/acolyte-dev/acolyte/internal/termtext"
	"github.com/acolyte-dev/acolyte/memory"
)

//go:embed assets
var assets embed.FS

type pages struct {
	tmpl   map[string]*template.Template
	static fs.FS
}

func newPages() (*pages, error) {
	funcs := template.FuncMap{
		"when":  when,
		"short": func(s string) string { return s[:min(len(s), 10)] },
		"esc":   termtext.Escape,
		"score": func(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) },
		"join":  strings.Join,
		"plural": func(n int, one, many string) string {
			if n == 1 {
				return "1 " + one
			}
			return strconv.Itoa(n) + " " + many
		},
		"dict": func(nodes []*TopicNode, f filters) treeArgs { return treeArgs{nodes, f} },
		"pathOf": func(root, file string) string {
			return filepath.Join(root, filepath.FromSlash(file))
		},
	}
	p := &pages{tmpl: map[string]*template.Template{}}
	for _, name := range []string{"index", "edit", "forget", "review", "charts", "add"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/card.html", "assets/"+name+".html")
		if err != nil {
			return nil, err
		}
		p.tmpl[name] = t
	}
	sub, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, err
	}
	p.static = sub
	return p, nil
}

// treeArgs are what one level of the topic tree is drawn from.
type treeArgs struct {
	Nodes   []*TopicNode
	Filters filters
}

// view is what every page's template gets.
type view struct {
	Title   string
	CSRF    string
	Project string
	Review  int
	Body    any
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, name, title string, body any) {
	session, _ := r.Context().Value(sessionKey{}).(string)
	queue, _ := s.reviewQueue(r.Context())
	v := view{Title: title, CSRF: s.csrf(session), Project: termtext.Escape(s.cfg.Project), Review: len(queue), Body: body}
	var buf bytes.Buffer
	if err := s.pages.tmpl[name].Execute(&buf, v); err != nil {
		http.Error(w, "acolyte ui: render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

// failed answers a request the store could not serve.
func failed(w http.ResponseWriter, err error) {
	refuse(w, http.StatusInternalServerError, termtext.EscapeText(err.Error()))
}

func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	b, err := fs.ReadFile(s.pages.static, r.PathValue("name"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if strings.HasSuffix(r.PathValue("name"), ".css") {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	}
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.Write(b)
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	l, err := s.list(r.Context(), parseFilters(r.URL.Query()))
	if err != nil {
		failed(w, err)
		return
	}
	code := http.StatusOK
	if l.Error != "" {
		code = http.StatusBadRequest
	}
	s.render(w, r, code, "index", "Memories", l)
}

// listed holds what one request listed, so that a page lists the store
// once however many parts of it (the list, the sidebar, the review count)
// need the memories: at 10k memories a listing is most of a page's time.
type listed struct {
	mems []memory.Memory
	done bool
}

type listedKey struct{}

// visible lists every memory visible here, once per request.
func (s *Server) visible(ctx context.Context) ([]memory.Memory, error) {
	l, _ := ctx.Value(listedKey{}).(*listed)
	if l != nil && l.done {
		return l.mems, nil
	}
	mems, err := s.cfg.Toolkit.List(ctx, memory.Filter{})
	if err != nil {
		return nil, err
	}
	if l != nil {
		l.mems, l.done = mems, true
	}
	return mems, nil
}

// forget drops what this request listed, after it changed the memories.
func forgetListed(ctx context.Context) {
	if l, _ := ctx.Value(listedKey{}).(*listed); l != nil {
		*l = listed{}
	}
}

// one finds a visible memory by id, described as the list shows it.
// requested is the memory the request's path names, or false once the
// answer (not found, or the failure) has been written.
func (s *Server) requested(w http.ResponseWriter, r *http.Request) (card, bool) {
	c, err := s.one(r.Context(), r.PathValue("id"))
	if errors.Is(err, memory.ErrNotFound) {
		refuse(w, http.StatusNotFound, "no memory with that id is visible here")
		return card{}, false
	}
	if err != nil {
		failed(w, err)
		return card{}, false
	}
	return c, true
}

func (s *Server) one(ctx context.Context, id string) (card, error) {
	mems, err := s.visible(ctx)
	if err != nil {
		return card{}, err
	}
	i := slices.IndexFunc(mems, func(m memory.Memory) bool { return m.ID == id })
	if i < 0 {
		return card{}, memory.ErrNotFound
	}
	cards := []card{{Memory: mems[i]}}
	if err := s.describe(ctx, cards); err != nil {
		return card{}, err
	}
	return cards[0], nil
}

// back is where a form sends the browser after a change: a path on this
// server, never another site. A browser drops tabs and newlines from a
// URL and reads \\ as /, so /<TAB>/evil.example is //evil.example to it:
// anything but a plain path (a control character, a backslash, a second
// leading slash however spelled, a scheme or a host) goes to /.
func back(r *http.Request) string {
	ret := r.FormValue("return")
	if !strings.HasPrefix(ret, "/") || strings.HasPrefix(ret, "//") ||
		strings.ContainsFunc(ret, func(c rune) bool { return c < 0x20 || c == 0x7f || c == '\\' || unicode.IsSpace(c) && c != ' ' }) {
		return "/"
	}
	u, err := url.Parse(ret)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || strings.HasPrefix(u.Path, "//") {
		return "/"
	}
	if p, err := url.PathUnescape(u.EscapedPath()); err != nil || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\t\r\n") {
		return "/"
	}
	return ret
}

type editPage struct {
	Card   card
	Text   string
	Topic  string
	Globs  string // one a line
	Return string
	Review bool
	Error  string
}

func (s *Server) editForm(w http.ResponseWriter, r *http.Request) {
	c, ok := s.requested(w, r)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, "edit", "Edit", editPage{Card: c, Text: termtext.EscapeText(c.Content), Topic: termtext.Escape(c.Topic),
		Globs: termtext.EscapeText(strings.Join(c.Globs, "\n")), Return: back(r), Review: r.FormValue("review") == "1"})
}

func (s *Server) edit(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c, ok := s.requested(w, r)
	if !ok {
		return
	}
	page := editPage{Card: c, Text: r.PostFormValue("content"), Topic: r.PostFormValue("topic"), Globs: r.PostFormValue("globs"),
		Return: back(r), Review: r.PostFormValue("review") == "1"}
	rev := memory.Revision{Content: page.Text, Topic: page.Topic}
	if r.PostFormValue("set_globs") == "1" {
		rev.SetGlobs, rev.Globs = true, globLines(page.Globs)
	}
	_, err := s.cfg.Toolkit.Edit(r.Context(), id, rev)
	forgetListed(r.Context())
	if err != nil {
		page.Error = termtext.EscapeText(err.Error())
		if errors.Is(err, memory.ErrSecret) {
			// The refused text is not sent back: the page would hold the
			// credential, and the browser's form cache with it.
			page.Text, page.Topic, page.Globs = c.Content, c.Topic, strings.Join(c.Globs, "\n")
		}
		page.Text, page.Topic, page.Globs = termtext.EscapeText(page.Text), termtext.Escape(page.Topic), termtext.EscapeText(page.Globs)
		s.render(w, r, http.StatusUnprocessableEntity, "edit", "Edit", page)
		return
	}
	if page.Review {
		if err := s.markReviewed(r.Context(), id); err != nil {
			failed(w, err)
			return
		}
	}
	http.Redirect(w, r, page.Return, http.StatusSeeOther)
}

// addPage is the form that adds a memory, as acolyte remember does.
type addPage struct {
	Text, Topic, Globs, Scope string
	Scopes                    []memory.Scope
	Project                   bool
	Error                     string
}

// addScopes are the scopes a memory can be added to here: project inside
// a repository (the default there), and user.
func (s *Server) addScopes() []memory.Scope {
	if s.cfg.Project == "" {
		return []memory.Scope{memory.ScopeUser}
	}
	return []memory.Scope{memory.ScopeProject, memory.ScopeUser}
}

func (s *Server) addForm(w http.ResponseWriter, r *http.Request) {
	scopes := s.addScopes()
	s.render(w, r, http.StatusOK, "add", "Add", addPage{Scopes: scopes, Scope: string(scopes[0]), Project: s.cfg.Project != ""})
}

func (s *Server) add(w http.ResponseWriter, r *http.Request) {
	page := addPage{Text: r.PostFormValue("content"), Topic: r.PostFormValue("topic"), Globs: r.PostFormValue("globs"),
		Scope: r.PostFormValue("scope"), Scopes: s.addScopes(), Project: s.cfg.Project != ""}
	globs := globLines(page.Globs)
	err := memory.ValidateGlobs(globs)
	if err == nil && !slices.Contains(page.Scopes, memory.Scope(page.Scope)) {
		err = fmt.Errorf("scope %q: add to one of %s", page.Scope, strings.Join(scopeNames(page.Scopes), ", "))
	}
	if err == nil {
		_, err = s.cfg.Toolkit.Add(r.Context(), memory.Draft{Content: page.Text, Topic: page.Topic, Scope: memory.Scope(page.Scope),
			Kind: memory.KindStored, Source: "ui", Globs: globs})
		forgetListed(r.Context())
	}
	if err != nil {
		page.Error = termtext.EscapeText(err.Error())
		if errors.Is(err, memory.ErrSecret) {
			// As for an edit: the refused text is not sent back.
			page.Text, page.Topic = "", ""
		}
		page.Text, page.Topic, page.Globs = termtext.EscapeText(page.Text), termtext.Escape(page.Topic), termtext.EscapeText(page.Globs)
		s.render(w, r, http.StatusUnprocessableEntity, "add", "Add", page)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// globLines are the globs of a form's text area, one a line.
func globLines(text string) []string {
	var globs []string
	for _, g := range strings.Split(text, "\n") {
		if g = strings.TrimSpace(g); g != "" {
			globs = append(globs, g)
		}
	}
	return globs
}

func scopeNames(scopes []memory.Scope) []string {
	out := make([]string, len(scopes))
	for i, sc := range scopes {
		out[i] = string(sc)
	}
	return out
}

type forgetPage struct {
	Card   card
	Return string
	Error  string
}

func (s *Server) forgetForm(w http.ResponseWriter, r *http.Request) {
	c, ok := s.requested(w, r)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, "forget", "Forget", forgetPage{Card: c, Return: back(r)})
}

func (s *Server) forget(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	c, ok := s.requested(w, r)
	if !ok {
		return
	}
	_, err := s.cfg.Toolkit.Remove(r.Context(), id)
	forgetListed(r.Context())
	if err != nil {
		s.render(w, r, http.StatusUnprocessableEntity, "forget", "Forget", forgetPage{Card: c, Return: back(r), Error: termtext.EscapeText(err.Error())})
		return
	}
	http.Redirect(w, r, back(r), http.StatusSeeOther)
}

// The review queue: the observations distill added since the last review.
// A mark in the local store says when the last review ended and which
// observations after it were kept; the queue is the rest.

type reviewMark struct {
	Since time.Time `json:"since,omitzero"`
	Kept  []string  `json:"kept,omitempty"`
}

func (s *Server) reviewKey() string { return "ui.review:" + s.cfg.Project }

func (s *Server) loadMark(ctx context.Context) (reviewMark, error) {
	var mark reviewMark
	raw, err := s.cfg.State.GetState(ctx, s.reviewKey())
	if err != nil || raw == "" {
		return mark, err
	}
	// A damaged mark only sends the observations round for review again.
	_ = json.Unmarshal([]byte(raw), &mark)
	return mark, nil
}

// reviewQueue lists the observations not reviewed yet, oldest first.
func (s *Server) reviewQueue(ctx context.Context) ([]memory.Memory, error) {
	mark, err := s.loadMark(ctx)
	if err != nil {
		return nil, err
	}
	all, err := s.visible(ctx)
	if err != nil {
		return nil, err
	}
	var queue []memory.Memory
	for _, m := range all {
		if m.Kind == memory.KindObservation && m.CreatedAt.After(mark.Since) && !slices.Contains(mark.Kept, m.ID) {
			queue = append(queue, m)
		}
	}
	return queue, nil
}

// markReviewed records that id was kept; once the queue is empty the mark
// moves past every observation, so it stays small.
func (s *Server) markReviewed(ctx context.Context, id string) error {
	mark, err := s.loadMark(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(mark.Kept, id) {
		mark.Kept = append(mark.Kept, id)
	}
	if err := s.saveMark(ctx, mark); err != nil {
		return err
	}
	queue, err := s.reviewQueue(ctx)
	if err != nil || len(queue) > 0 {
		return err
	}
	all, err := s.visible(ctx)
	if err != nil {
		return err
	}
	for _, m := range all {
		if m.Kind == memory.KindObservation && m.CreatedAt.After(mark.Since) {
			mark.Since = m.CreatedAt
		}
	}
	mark.Kept = nil
	return s.saveMark(ctx, mark)
}

func (s *Server) saveMark(ctx context.Context, mark reviewMark) error {
	b, err := json.Marshal(mark)
	if err != nil {
		return err
	}
	return s.cfg.State.SetState(ctx, s.reviewKey(), string(b))
}

func (s *Server) review(w http.ResponseWriter, r *http.Request) {
	queue, err := s.reviewQueue(r.Context())
	if err != nil {
		failed(w, err)
		return
	}
	cards := make([]card, len(queue))
	for i, m := range queue {
		cards[i] = card{Memory: m}
	}
	if len(cards) > pageSize {
		cards = cards[:pageSize]
	}
	if err := s.describe(r.Context(), cards); err != nil {
		failed(w, err)
		return
	}
	s.render(w, r, http.StatusOK, "review", "Review", struct {
		Cards []card
		Total int
	}{cards, len(queue)})
}

func (s *Server) keep(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, ok := s.requested(w, r); !ok {
		return
	}
	if err := s.markReviewed(r.Context(), id); err != nil {
		failed(w, err)
		return
	}
	http.Redirect(w, r, "/review", http.StatusSeeOther)
}

func (s *Server) charts(w http.ResponseWriter, r *http.Request) {
	mems, err := s.visible(r.Context())
	if err != nil {
		failed(w, err)
		return
	}
	page := buildCharts(mems, s.cfg.Now())
	// Each card says where its memory came from, as on the list.
	for _, cards := range [][]card{page.Recent, page.Oldest} {
		if err := s.describe(r.Context(), cards); err != nil {
			failed(w, err)
			return
		}
	}
	s.render(w, r, http.StatusOK, "charts", "Charts", page)
}
