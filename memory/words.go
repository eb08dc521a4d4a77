package memory

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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
// whole word would only match "Caroline's" itself), and then the wholes of
// the identifiers (see identifierWholes).
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
	return append(out, identifierWholes(text)...)
}

// identifierWholes returns each identifier of text that Words splits into
// parts, as one lowercase word: parseConfig, parse_config and parse-config
// all give parseconfig, and internal/http_server gives httpserver. The
// lexical index holds a camelCase or dotted identifier whole as well as in
// parts, and a memory may spell as one word what a question splits, so a
// search looks for both; a memory that holds the whole outranks one that
// merely holds its parts somewhere.
func identifierWholes(text string) []string {
	var out []string
	for _, field := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-'
	}) {
		if plainWord(field) {
			continue // one part, as Words would find it; most words of prose
		}
		parts := Words(field)
		if len(parts) < 2 {
			continue
		}
		whole := strings.Join(parts, "")
		if !slices.Contains(out, whole) {
			out = append(out, whole)
		}
	}
	return out
}

// plainWord reports whether s is ASCII letters, lower case after the
// first: a word Words leaves whole, which identifierWholes can skip
// without splitting it (FuzzIdentifierWholes).
func plainWord(s string) bool {
	if s == "" || !('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// splitIdentifier breaks camelCase, PascalCase and ACRONYMWord boundaries and
// separates letters from digits.
func splitIdentifier(s string) []string {
	if parts, ok := splitASCIIIdentifier(s); ok {
		return parts
	}
	rs := []rune(s)
	var parts []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		boundary := false
		switch {
		case unicode.IsLower(prev) && unicode.IsUpper(cur):
			boundary = true
		case unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && !pluralAcronym(rs, i+1):
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

// splitASCIIIdentifier is splitIdentifier for ASCII s, where each byte is
// a rune and unicode's classes are the ASCII ranges: the parts are slices
// of s rather than strings built from its runes, which was most of what
// deriving the lexical text of an imported memory cost.
// FuzzSplitIdentifier holds the two together. ok is false for other s.
func splitASCIIIdentifier(s string) (parts []string, ok bool) {
	lower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	upper := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	digit := func(c byte) bool { return '0' <= c && c <= '9' }
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return nil, false
		}
		if i == 0 {
			continue
		}
		prev, cur := s[i-1], s[i]
		boundary := false
		switch {
		case lower(prev) && upper(cur):
			boundary = true
		case upper(prev) && upper(cur) && i+1 < len(s) && lower(s[i+1]) && !(s[i+1] == 's' && (i+2 == len(s) || !lower(s[i+2]))):
			boundary = true // the S in HTTPServer starts a new word; the s of IDs does not
		case digit(prev) != digit(cur) && (lower(prev) || upper(prev) || lower(cur) || upper(cur)):
			boundary = true
		}
		if boundary {
			parts = append(parts, s[start:i])
			start = i
		}
	}
	return append(parts, s[start:]), true
}

// pluralAcronym reports whether the lowercase letter at rs[i], after
// capitals, is the plural s of an acronym (IDs, URLs, APIsFor) rather
// than the start of a word (HTTPServer).
func pluralAcronym(rs []rune, i int) bool {
	return rs[i] == 's' && (i+1 == len(rs) || !unicode.IsLower(rs[i+1]))
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

// Kin. A query word and a word of a memory are kin when one is a
// derivation or a shortening of the other that the Porter stemmer does not
// join: lint and linter, authenticate and auth, config and configuration.
// Kin earn part of a word's weight (see KinWeight).
//
// Two rules cover most of it, both on prefixes of at least minKin letters,
// because English and code derive words by adding suffixes and abbreviate
// them by cutting:
//
//   - a prefix of the word is a word of the memory: authenticate finds
//     auth, linter finds lint, repository finds repo;
//   - the word, less an inflection, begins a word of the memory: lint finds
//     linter, parse finds parser, auth finds authentication.
//
// Abbreviations that are no prefix of their word, or shorter than minKin,
// come from abbreviations, and words that share no prefix at all
// (synonyms, spellings) from equivalents.
const minKin = 4

// KinForm is one form whose words are kin of a query word: a word equal
// to Text, or, when Prefix, any word that begins with it. An engine
// matches each form after stemming it as it stems its index.
type KinForm struct {
	Text   string
	Prefix bool
}

// KinForms returns the forms that match the kin of the query word w, none
// when it has none: the rules above, for every engine.
func KinForms(w string) []KinForm {
	var forms []KinForm
	add := func(t string, prefix bool) {
		if f := (KinForm{t, prefix}); !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	if isASCII(w) && len(w) >= minKin {
		for n := minKin; n < len(w); n++ {
			add(w[:n], false)
		}
		base := w
		for _, suffix := range []string{"ing", "ed", "es", "s", "e"} {
			if b, ok := strings.CutSuffix(w, suffix); ok && len(b) >= minKin && len(b) < len(base) {
				base = b
			}
		}
		add(base, true)
	}
	for _, g := range equivalents() {
		if slices.ContainsFunc(g, func(m string) bool { return inflects(w, m) }) {
			for _, m := range g {
				if !inflects(w, m) {
					add(m, false)
				}
			}
		}
	}
	for _, a := range abbreviations() {
		short, long := a[0], a[1]
		if w == short || w == short+"s" {
			add(long, true)
		} else if strings.HasPrefix(w, long) {
			add(short, false)
			add(short+"s", false)
		}
	}
	return forms
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// abbreviations pairs common programming abbreviations with the stem of the
// word they shorten, where the prefix rules of kinTerm cannot join them:
// the abbreviation is shorter than minKin or not a prefix of its word. The
// list is general programming usage, not drawn from any benchmark.
func abbreviations() [][2]string {
	return [][2]string{
		{"db", "databas"}, {"pkg", "packag"}, {"msg", "messag"}, {"cfg", "configur"},
		{"fn", "function"}, {"func", "function"}, {"ctx", "context"}, {"req", "request"},
		{"resp", "respons"}, {"err", "error"}, {"str", "string"}, {"src", "sourc"},
		{"dst", "destin"}, {"env", "environ"}, {"dir", "director"}, {"arg", "argument"},
		{"var", "variabl"}, {"lib", "librar"}, {"doc", "document"}, {"dep", "depend"},
		{"app", "applic"}, {"dev", "develop"}, {"gen", "generat"}, {"tmp", "temporar"},
		{"k8s", "kubernet"}, {"i18n", "internation"}, {"l10n", "locali"}, {"a11y", "accessib"},
		{"fmt", "format"}, {"id", "identifi"}, {"mgmt", "manag"}, {"perf", "perform"},
		{"prod", "product"}, {"repo", "repositor"}, {"auth", "authent"}, {"auth", "authori"},
		{"init", "initi"}, {"impl", "implement"}, {"info", "inform"}, {"spec", "specif"},
		{"param", "paramet"}, {"attr", "attribut"}, {"prop", "properti"}, {"util", "utilit"},
		{"async", "asynchron"}, {"sync", "synchron"}, {"config", "configur"}, {"deps", "depend"},
		{"docs", "document"}, {"eval", "evalu"}, {"exec", "execut"},
	}
}

// equivalents are groups of words that name the same thing in software
// writing but share no prefix, so the rules above cannot join them: common
// synonyms (mock, fake, stub) and British and American spellings (colour,
// color). A query word
// that is a member, or an inflection of one (see inflects), finds the
// other members as kin; each engine stems them as it stems its index, so
// "mock" finds "mocked" too. The groups are general programming and
// English usage, not drawn from any benchmark.
func equivalents() [][]string {
	return [][]string{
		// Synonyms.
		{"function", "method"}, {"argument", "parameter"}, {"mock", "fake", "stub"},
		{"folder", "directory"}, {"executable", "binary"}, {"error", "exception"},
		{"response", "reply"}, {"secret", "credential"}, {"option", "flag"},
		{"delete", "remove"}, {"fetch", "retrieve"}, {"crate", "package", "library"},
		{"bug", "defect"}, {"spawn", "launch"}, {"terminate", "kill"},
		{"dictionary", "map"}, {"validate", "verify"}, {"concurrent", "parallel"},
		{"serialize", "marshal"}, {"deserialize", "unmarshal"}, {"timeout", "deadline"},
		{"image", "picture"}, {"email", "mail"}, {"url", "link"},
		// Spellings.
		{"color", "colour"}, {"behavior", "behaviour"}, {"favor", "favour"},
		{"license", "licence"}, {"center", "centre"}, {"gray", "grey"},
		{"catalog", "catalogue"}, {"dialog", "dialogue"}, {"analyze", "analyse"},
		{"initialize", "initialise"}, {"serialize", "serialise"}, {"organize", "organise"},
	}
}

// inflects reports whether w is m or a regular inflection of it: m+s,
// m+es, m+ed, m+d, m+ing, and m's final e or y changed before a suffix.
func inflects(w, m string) bool {
	if w == m {
		return true
	}
	rest, ok := strings.CutPrefix(w, m)
	if ok {
		return slices.Contains([]string{"s", "es", "ed", "d", "ing"}, rest)
	}
	if stem, ok := strings.CutSuffix(m, "e"); ok && w == stem+"ing" {
		return true
	}
	if stem, ok := strings.CutSuffix(m, "y"); ok && (w == stem+"ies" || w == stem+"ied") {
		return true
	}
	return false
}

// DerivationalBase returns the base a word is derived from, cut further
// than the Porter stemmer cuts: one common derivational prefix, then the
// longest common suffix that leaves at least minBase letters, then one of
// a doubled final consonant, so "deduplication", "duplicates" and
// "duplicate" share "duplic", and "reformats", "formatter" and
// "formatting" share "format". It returns "" when nothing is cut. The
// affixes are general English morphology, not drawn from any benchmark.
func DerivationalBase(w string) string {
	if !isASCII(w) || len(w) < minBase+2 {
		return ""
	}
	b := w
	for _, p := range []string{"dis", "non", "pre", "de", "re", "un"} {
		if r, ok := strings.CutPrefix(b, p); ok && len(r) >= minBase+2 {
			b = r
			break
		}
	}
	// Longest first, so "ations" is cut whole rather than as "s".
	for _, s := range []string{
		"ations", "ators", "ation", "ition", "ments", "ables", "ibles",
		"ings", "ator", "ment", "ness", "ions", "ates", "ated", "izes", "ized", "ises", "ised", "able", "ible", "ally",
		"ers", "ors", "ing", "ion", "ied", "ies", "ate", "ize", "ise", "ity", "ive",
		"er", "or", "ed", "es", "ly", "ic", "al",
		"s", "e",
	} {
		if r, ok := strings.CutSuffix(b, s); ok && len(r) >= minBase {
			b = r
			break
		}
	}
	if n := len(b); n > minBase && b[n-1] == b[n-2] && !strings.ContainsRune("aeiouls", rune(b[n-1])) {
		b = b[:n-1] // formatt(er) is format
	}
	if b == w {
		return ""
	}
	return b
}

// minBase is the fewest letters DerivationalBase leaves.
const minBase = 4

// WordPairs returns each pair of adjacent words of text, neither a stop
// word, since a memory may write as one word ("codepaths", "newtest")
// what a question writes as two.
func WordPairs(text string) [][2]string {
	var out [][2]string
	ws := Words(text)
	for i := 1; i < len(ws); i++ {
		a, b := ws[i-1], ws[i]
		if isStopWord(a) || isStopWord(b) || !isASCII(a+b) || len(a) < 2 || len(b) < 2 {
			continue
		}
		if p := [2]string{a, b}; !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// MayBeBase reports whether w, a word without a derivational base of its
// own, may be the base of other words, and so be found among the forms
// LexicalForms indexes.
func MayBeBase(w string) bool { return isASCII(w) && len(w) >= minKin }
