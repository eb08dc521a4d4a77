package memory_test

import (
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
