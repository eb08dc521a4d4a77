package ui

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/acolyte-dev/acolyte/internal/termtext"
	"github.com/acolyte-dev/acolyte/memory"
)

// pageSize is how many memories one page shows: a store of 10k memories is
// read whole on the server, but the browser gets one page of it.
const pageSize = 50

// filters are what the list page is asked for, from its query string.
type filters struct {
	Query  string
	Scope  string
	Kind   string
	Topic  string
	Path   string // a glob over the paths a memory mentions or is scoped to; ** crosses folders
	Source string // the file or road a memory came from (sourceFile)
	Stale  bool
	Page   int
}

func parseFilters(q url.Values) filters {
	f := filters{Query: q.Get("q"), Scope: q.Get("scope"), Kind: q.Get("kind"), Topic: q.Get("topic"),
		Path: q.Get("path"), Source: q.Get("source"), Stale: q.Get("stale") == "1"}
	f.Page, _ = strconv.Atoi(q.Get("page"))
	f.Page = max(f.Page, 1)
	return f
}

// memoryFilter is the part of f the toolkit applies itself, checked as the
// CLI checks its flags.
func (f filters) memoryFilter() (memory.Filter, error) {
	mf := memory.Filter{Topic: f.Topic}
	var err error
	if f.Scope != "" {
		if mf.Scope, err = memory.ParseScope(f.Scope); err != nil {
			return mf, err
		}
	}
	if f.Kind != "" {
		if mf.Kind, err = memory.ParseKind(f.Kind); err != nil {
			return mf, err
		}
	}
	return mf, nil
}

// with is the list page's address for f with one more setting changed.
func (f filters) With(key, value string) string {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("q", f.Query)
	set("scope", f.Scope)
	set("kind", f.Kind)
	set("topic", f.Topic)
	set("path", f.Path)
	set("source", f.Source)
	if f.Stale {
		v.Set("stale", "1")
	}
	v.Del(key)
	v.Del("page")
	set(key, value)
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

// sourceFile is where a memory came from, as a filter names it: the file
// of a rule (AGENTS.md, docs/AGENTS.md), seeds.json, an imported file, or
// the road a stored memory took (cli, agent, distill, mcp).
func sourceFile(m memory.Memory) string {
	s, _, _ := strings.Cut(m.Source, "#")
	if s == "" {
		return "unknown"
	}
	return s
}

// matchGlob matches a slash-separated path against a glob in which *, ?
// and [...] match within a folder (path.Match) and a ** segment matches
// any number of folders.
// pathFilterAdmits says whether the path filter admits m: a path its
// content mentions matches the filter, or it is scoped to files the
// filter covers or within them (its globs, as text, match the filter or
// the filter matches them: internal/db/** admits a memory scoped to
// internal/db/**/*.go and one scoped to internal/**). A memory for every
// file (**) is not listed under each folder.
func pathFilterAdmits(filter string, m memory.Memory) bool {
	if slices.ContainsFunc(m.Paths, func(p string) bool { return matchGlob(filter, p) }) {
		return true
	}
	return slices.ContainsFunc(m.Globs, func(g string) bool {
		return g != memory.AlwaysGlob && (g == filter || matchGlob(filter, g) || matchGlob(g, filter))
	})
}

func matchGlob(glob, name string) bool {
	return matchParts(strings.Split(glob, "/"), strings.Split(name, "/"))
}

func matchParts(glob, name []string) bool {
	for len(glob) > 0 {
		if glob[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchParts(glob[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(glob[0], name[0]); err != nil || !ok {
			return false
		}
		glob, name = glob[1:], name[1:]
	}
	return len(name) == 0
}

// card is one memory as the page shows it.
type card struct {
	memory.Memory
	// Text is the content with terminal escapes shown as text; the
	// template escapes HTML.
	Text   string
	Score  float64
	Scored bool
	// Why says what a search found in the memory: the query's words it
	// holds, or none, when only its meaning brought it.
	Why      string
	Words    []string
	Derived  bool
	Origin   Origin
	Stale    Staleness
	IsStale  bool
	Provided string // where it came from, in words
}

// TopicNode is one heading of the topic tree, with how many memories are
// filed under it or beneath it.
type TopicNode struct {
	Name, Path string
	Count      int
	Children   []*TopicNode
}

func topicTree(mems []memory.Memory) []*TopicNode {
	root := &TopicNode{}
	for _, m := range mems {
		if m.Topic == "" {
			continue
		}
		node := root
		parts := strings.Split(m.Topic, memory.TopicSeparator)
		for i, p := range parts {
			var child *TopicNode
			for _, c := range node.Children {
				if c.Name == p {
					child = c
					break
				}
			}
			if child == nil {
				child = &TopicNode{Name: termtext.Escape(p), Path: strings.Join(parts[:i+1], memory.TopicSeparator)}
				node.Children = append(node.Children, child)
			}
			child.Count++
			node = child
		}
	}
	var sortTree func(ns []*TopicNode)
	sortTree = func(ns []*TopicNode) {
		sort.Slice(ns, func(i, j int) bool { return ns[i].Path < ns[j].Path })
		for _, n := range ns {
			sortTree(n.Children)
		}
	}
	sortTree(root.Children)
	return root.Children
}

// listing is the list page's content.
type listing struct {
	Filters filters
	Cards   []card
	Total   int
	Pages   int
	Topics  []*TopicNode
	Sources []string
	Scopes  []memory.Scope
	Kinds   []memory.Kind
	Error   string
	Prev    string
	Next    string
}

// list reads what f asks for: a search ranked as `acolyte search` ranks,
// or every visible memory, newest first; then the filters the toolkit has
// no field for, then one page.
func (s *Server) list(ctx context.Context, f filters) (listing, error) {
	out := listing{Filters: f, Scopes: memory.Scopes, Kinds: memory.Kinds}
	mf, err := f.memoryFilter()
	if err != nil {
		out.Error = err.Error()
		return out, nil
	}
	// The sidebar's topics and sources are those of every visible memory.
	all, err := s.visible(ctx)
	if err != nil {
		return out, err
	}
	out.Topics = topicTree(all)
	seen := map[string]bool{}
	for _, m := range all {
		if src := sourceFile(m); !seen[src] {
			seen[src] = true
			out.Sources = append(out.Sources, src)
		}
	}
	slices.Sort(out.Sources)

	var cards []card
	if strings.TrimSpace(f.Query) != "" {
		mf.Limit = memory.MaxLimit
		results, err := s.cfg.Toolkit.Search(ctx, memory.Query{Text: f.Query, Filter: mf})
		if err != nil {
			out.Error = err.Error()
			return out, nil
		}
		words := memory.QueryWords(f.Query)
		for _, r := range results {
			c := card{Memory: r.Memory, Score: r.Score, Scored: true}
			c.Words = heldWords(r.Memory, words)
			if len(c.Words) > 0 {
				c.Why = "lexical"
			} else {
				c.Why = "meaning"
			}
			cards = append(cards, c)
		}
	} else {
		for i := len(all) - 1; i >= 0; i-- { // the store lists oldest first
			if mf.Admits(all[i]) {
				cards = append(cards, card{Memory: all[i]})
			}
		}
	}
	cards = slices.DeleteFunc(cards, func(c card) bool {
		if f.Source != "" && sourceFile(c.Memory) != f.Source {
			return true
		}
		return f.Path != "" && !pathFilterAdmits(f.Path, c.Memory)
	})
	if f.Stale {
		cards, err = s.onlyStale(ctx, cards)
		if err != nil {
			return out, err
		}
	}
	out.Total = len(cards)
	out.Pages = max(1, (len(cards)+pageSize-1)/pageSize)
	f.Page = min(f.Page, out.Pages)
	out.Filters.Page = f.Page
	lo := (f.Page - 1) * pageSize
	page := cards[lo:min(lo+pageSize, len(cards))]
	if err := s.describe(ctx, page); err != nil {
		return out, err
	}
	if strings.TrimSpace(f.Query) != "" {
		// As every search orders its results (memory.MarkStale); the
		// page alone, whose staleness alone is asked.
		memory.FreshFirstAmongEquals(page, func(c card) float64 { return c.Score }, func(c card) bool { return c.IsStale })
	}
	out.Cards = page
	if f.Page > 1 {
		out.Prev = f.withPage(f.Page - 1)
	}
	if f.Page < out.Pages {
		out.Next = f.withPage(f.Page + 1)
	}
	return out, nil
}

func (f filters) withPage(n int) string {
	u := f.With("page", "")
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "page=" + strconv.Itoa(n)
}

// heldWords are the query's words (memory.QueryWords, the words the
// engine looks up) that the memory's lexical text holds, and, marked
// "(kin)", those it holds only a kin of (memory.KinForms: reach for
// reached, repo for repository), which the engine credits at part weight.
func heldWords(m memory.Memory, words []string) []string {
	var held []string
	has := map[string]bool{}
	for _, w := range memory.Words(memory.LexicalText(&m) + " " + memory.LexicalForms(&m)) {
		if !has[w] {
			has[w] = true
			held = append(held, w)
		}
	}
	var out []string
	for _, w := range words {
		switch {
		case has[w]:
			out = append(out, w)
		case slices.ContainsFunc(memory.KinForms(w), func(k memory.KinForm) bool {
			return has[k.Text] || k.Prefix && slices.ContainsFunc(held, func(h string) bool { return strings.HasPrefix(h, k.Text) })
		}):
			out = append(out, w+" (kin)")
		}
	}
	return out
}

func (s *Server) onlyStale(ctx context.Context, cards []card) ([]card, error) {
	if s.cfg.Stale == nil {
		return nil, nil
	}
	mems := make([]memory.Memory, len(cards))
	for i, c := range cards {
		mems[i] = c.Memory
	}
	stale, err := s.cfg.Stale(ctx, mems)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(cards, func(c card) bool {
		_, ok := stale[c.ID]
		return !ok
	}), nil
}

// describe fills in what a card shows beyond the memory: its text made
// safe, where it came from and whether it went stale.
func (s *Server) describe(ctx context.Context, cards []card) error {
	var origins map[string]Origin
	var stale map[string]Staleness
	mems := make([]memory.Memory, len(cards))
	derived := false
	for i := range cards {
		mems[i] = cards[i].Memory
		cards[i].Derived = cards[i].Scope == memory.ScopeProject && s.cfg.Derived(cards[i].Memory)
		derived = derived || cards[i].Derived
	}
	var err error
	if derived && s.cfg.Origins != nil {
		if origins, err = s.cfg.Origins(ctx); err != nil {
			return err
		}
	}
	if s.cfg.Stale != nil && len(mems) > 0 {
		if stale, err = s.cfg.Stale(ctx, mems); err != nil {
			return err
		}
	}
	for i := range cards {
		c := &cards[i]
		c.Text = termtext.EscapeText(c.Content)
		c.Origin = origins[c.ID]
		c.Stale, c.IsStale = stale[c.ID]
		c.Provided = provenance(c.Memory, c.Derived, c.Origin)
	}
	return nil
}

// provenance says in words where a memory came from.
func provenance(m memory.Memory, derived bool, o Origin) string {
	src := termtext.Escape(m.Source)
	switch {
	case derived && o.File != "":
		what := "rule"
		if m.Kind == memory.KindSeed {
			what = "seed"
		}
		at := fmt.Sprintf("a %s from %s, line %d", what, termtext.Escape(o.File), o.Line)
		if _, heading, ok := strings.Cut(m.Source, "#"); ok {
			at += ", under the heading " + termtext.Escape(heading)
		}
		return at
	case derived:
		return "derived from " + src + " (run acolyte sync if the file changed)"
	case strings.HasPrefix(m.Source, "imported:"):
		return "imported once by acolyte seed from " + termtext.Escape(strings.TrimPrefix(m.Source, "imported:"))
	case m.Source == "distill":
		if m.Scope == memory.ScopeSession {
			return "distilled by the agent from session " + termtext.Escape(m.ScopeKey)
		}
		return "distilled by the agent after a task (the session is not recorded)"
	case m.Source == "cli":
		return "acolyte remember, on the command line"
	case m.Source == "agent":
		return "the agent's memory_add tool"
	case m.Source == "mcp":
		return "an MCP client's memory_add"
	case m.Source == "ui":
		return "added in acolyte ui"
	case m.Source == "":
		return "not recorded"
	}
	return src
}

// when shows a time for people, or "never".
func when(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}
