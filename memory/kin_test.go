package memory_test

import (
	"fmt"
	"slices"
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
	wantFirst(t, s, byID, []struct{ query, want string }{
		{"how do clients authenticate?", "Auth via Bearer token in the request header"},
		{"which tool lints the code?", "Biome is the formatter and linter"},
		{"where is parseConfig?", "Settings are read by parse_config"},
		{"what is in http_server?", "Routes live in internal/httpserver"},
	})
}

// A memory's own words are indexed in their joined and derived forms too:
// a question need not spell a word the way the memory does.
func TestSearchFindsMemorySideForms(t *testing.T) {
	s := openStore(t, "", nil)
	byID := addAll(t, s,
		"Deduplication runs nightly over the archive",
		"HTTP clients retry twice", // holds a part of httpserver, not the whole
		"Routes live in internal/http_server",
		"Prettier reformats the generated files",
		"Code owners review every change", // holds one of the two words
		"Cover new codepaths with an e2e test",
		"The release branch is cut on Mondays",
		"Use the staging cluster for load tests",
	)
	wantFirst(t, s, byID, []struct{ query, want string }{
		{"when are duplicates removed?", "Deduplication runs nightly over the archive"},
		{"where is httpserver?", "Routes live in internal/http_server"},
		{"which tool does the formatting?", "Prettier reformats the generated files"},
		{"how do I exercise code paths?", "Cover new codepaths with an e2e test"},
	})
}

// Words that share no prefix but name the same thing (a synonym, another
// spelling) are kin too, in whatever inflection the question uses.
func TestSearchFindsEquivalentWords(t *testing.T) {
	s := openStore(t, "", nil)
	byID := addAll(t, s,
		"Mock the payment gateway with the recorder in testutil",
		"Error text is shown in red via the theme colour table",
		"Never delete a migration once it has shipped",
		"The release branch is cut on Mondays",
		"Use the staging cluster for load tests",
	)
	wantFirst(t, s, byID, []struct{ query, want string }{
		{"how do I fake the payment gateway?", "Mock the payment gateway with the recorder in testutil"},
		{"which color is error text?", "Error text is shown in red via the theme colour table"},
		{"can I remove old migrations?", "Never delete a migration once it has shipped"},
	})
	// Without the equivalent the question finds nothing relevant.
	rs, err := s.Search(ctx, projA, memory.Query{Text: "how do I fake the gateway?"})
	if err != nil || len(rs) == 0 || rs[0].Content != "Mock the payment gateway with the recorder in testutil" {
		t.Fatalf("fake the gateway gave %+v (%v); want the mock first, above the floor", rs, err)
	}
}

// KinForms gives an equivalent as an exact form (the engine stems it), for
// any inflection of a member, and never the word itself as one.
func TestKinFormsEquivalents(t *testing.T) {
	for _, c := range []struct {
		word string
		want []string
	}{
		{"fakes", []string{"mock", "stub"}},
		{"faking", []string{"mock", "stub"}},
		{"removed", []string{"delete"}},
		{"colour", []string{"color"}},
		{"libraries", []string{"crate", "package"}},
	} {
		forms := memory.KinForms(c.word)
		for _, w := range c.want {
			if !slices.Contains(forms, memory.KinForm{Text: w}) {
				t.Errorf("KinForms(%q) = %v; want %q among them", c.word, forms, w)
			}
		}
		if slices.Contains(forms, memory.KinForm{Text: c.word}) {
			t.Errorf("KinForms(%q) holds the word itself: %v", c.word, forms)
		}
	}
}

// wantFirst checks that each query finds its memory first.
func wantFirst(t *testing.T, s *memory.Store, byID map[string]string, cases []struct{ query, want string }) {
	t.Helper()
	for _, c := range cases {
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

// A derived form is kin, not the word: a memory that holds the query's
// own word outranks one that holds only a form derived from it.
func TestExactWordOutranksDerivedForm(t *testing.T) {
	s := openStore(t, "", nil)
	byID := addAll(t, s,
		"Deduplication runs nightly",
		"Duplicate rows are dropped on import",
	)
	rs, err := s.Search(ctx, projA, memory.Query{Text: "duplicate", NoFloor: true})
	if err != nil {
		t.Fatal(err)
	}
	got := contents(rs, byID)
	if len(got) != 2 || got[0] != "Duplicate rows are dropped on import" || rs[0].Score <= rs[1].Score {
		t.Errorf("duplicate found %q; want both, the exact word strictly first", got)
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

// A pasted page of 8 KiB held 1,300 distinct words and took a search 8.6 s,
// one index lookup or more per word; a text yields at most 48, its first.
func TestQueryWordsAreBounded(t *testing.T) {
	text := pastedPage()
	words := memory.QueryWords(text)
	if len(words) != 48 || words[0] != letterWord(0) || words[47] != letterWord(47) {
		t.Fatalf("%d words from %d bytes: %q…", len(words), len(text), words[:min(3, len(words))])
	}
	if got := memory.QueryWords("how do clients authenticate"); !slices.Equal(got, []string{"clients", "authenticate"}) {
		t.Fatalf("a question: %q", got)
	}
}

// BenchmarkSearchLongQuery: a search whose text is a pasted page of 8 KiB of
// distinct words, the worst a caller may send.
func BenchmarkSearchLongQuery(b *testing.B) {
	s := openStore(b, "", nil)
	if _, err := s.Add(ctx, projA, memory.Draft{Content: "Biome is the formatter and linter", Scope: memory.ScopeProject, Source: "test"}); err != nil {
		b.Fatal(err)
	}
	q := pastedPage()
	for b.Loop() {
		if _, err := s.Search(ctx, projA, memory.Query{Text: q, NoFloor: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// pastedPage is 8 KiB of distinct made-up words.
func pastedPage() string {
	var b strings.Builder
	for i := 0; b.Len() < memory.MaxContentBytes-16; i++ {
		fmt.Fprintf(&b, "%s ", letterWord(i))
	}
	return b.String()
}

// letterWord is the i-th of the words zqa, zqb, …, zqba, …: letters only,
// so Words keeps each whole, and in no stop-word list.
func letterWord(i int) string {
	w := ""
	for {
		w = string(rune('a'+i%26)) + w
		if i /= 26; i == 0 {
			return "zq" + w
		}
	}
}
