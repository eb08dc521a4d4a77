package memory_test

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

// Without an embedder only the words decide, so these are the lexical
// side's own matches.
func TestSearchFindsKinAndIdentifierParts(t *testing.T) {
	s := openStore(t, "", nil)
	byID := addAll(t, s,
		"Auth via Bearer token in the request header",
		"Biome is the formatter and linter",
		"Settings are read by parse_config",
		"Routes live in internal/httpserver",
		"The release branch is cut on Mondays",
		"Use the staging cluster for load tests",
	)
	for _, c := range []struct{ query, want string }{
		{"how do clients authenticate?", "Auth via Bearer token in the request header"},
		{"which tool lints the code?", "Biome is the formatter and linter"},
		{"where is parseConfig?", "Settings are read by parse_config"},
		{"what is in http_server?", "Routes live in internal/httpserver"},
	} {
		rs, err := s.Search(ctx, projA, memory.Query{Text: c.query, NoFloor: true})
		if err != nil {
			t.Fatal(err)
		}
		got := contents(rs, byID)
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("%q found %q; want %q first", c.query, got, c.want)
		}
	}
}

// Query words become FTS5 queries of their own (kin, identifier wholes):
// whatever a user types, the search must not fail on the query syntax.
func FuzzSearchQueryWords(f *testing.F) {
	for _, seed := range []string{
		"how do clients authenticate?", `a "quoted" parse_config`, "rock'n'roll*", "NEAR(a b) OR c",
		"internal/http_server", "x AND", `""""`, "dedup-lint^2 {col}:term", "ünïcödé words",
	} {
		f.Add(seed)
	}
	s := openStore(f, "", nil)
	if _, err := s.Add(ctx, projA, memory.Draft{Content: "Biome is the formatter and linter", Scope: memory.ScopeProject, Source: "test"}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if memory.ValidateContent(q) != nil || strings.TrimSpace(q) == "" {
			return
		}
		if _, err := s.Search(ctx, projA, memory.Query{Text: q}); err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
	})
}
