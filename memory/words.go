package memory

import (
	"strings"
	"unicode"
)

// Words splits text into lowercase words, breaking identifiers apart the way
// a reader would: runTool is "run tool", memory_embeddings is "memory
// embeddings", cmd/root.go is "cmd root go", HTTPServer is "http server".
func Words(text string) []string {
	var words []string
	for _, field := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		for _, w := range splitIdentifier(strings.Trim(field, "'")) {
			if w != "" {
				words = append(words, strings.ToLower(w))
			}
		}
	}
	return words
}

// queryWords are the words of a search worth looking for: Words without
// stop words, with a possessive 's dropped so "Caroline's" finds memories
// that say "Caroline" (the lexical index splits at the apostrophe, so the
// whole word would only match "Caroline's" itself).
func queryWords(text string) []string {
	var out []string
	for _, w := range Words(text) {
		if isStopWord(w) {
			continue // before trimming, or "let's" would become "let"
		}
		w = strings.TrimSuffix(w, "'s")
		if w != "" && !isStopWord(w) {
			out = append(out, w)
		}
	}
	return out
}

// splitIdentifier breaks camelCase, PascalCase and ACRONYMWord boundaries and
// separates letters from digits.
func splitIdentifier(s string) []string {
	rs := []rune(s)
	var parts []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		boundary := false
		switch {
		case unicode.IsLower(prev) && unicode.IsUpper(cur):
			boundary = true
		case unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			boundary = true // the S in HTTPServer starts a new word
		case unicode.IsDigit(prev) != unicode.IsDigit(cur) && (unicode.IsLetter(prev) || unicode.IsLetter(cur)):
			boundary = true
		case prev == '\'' || cur == '\'':
			// keep contractions such as don't whole
		}
		if boundary {
			parts = append(parts, string(rs[start:i]))
			start = i
		}
	}
	return append(parts, string(rs[start:]))
}

// stopWords are skipped when building a lexical query: they match nearly
// every memory and only add noise to BM25.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself
no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that
the their theirs them themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves i'm i've i'd i'll
you're you've you'd you'll he's she's it's we're we've they're they've that's there's what's let's don't doesn't
didn't isn't aren't wasn't weren't haven't hasn't hadn't won't wouldn't can't couldn't shouldn't also ever
yet get got`) {
		m[w] = true
	}
	return m
}()

// isStopWord reports whether w (lowercase) carries too little meaning to search for.
func isStopWord(w string) bool { return stopWords[w] }
