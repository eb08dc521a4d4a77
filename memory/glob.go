package memory

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Path globs say which files a memory applies to (Memory.Globs): a rule
// file's front matter (Claude Code's `paths`, Cursor's `globs`, Copilot's
// `applyTo`) or `remember --path`. They are matched against the
// slash-separated paths, relative to the repository root, of the files a
// path-scoped search names (Query.Paths), the way gitignore and Cursor
// match them:
//
//   - a glob without a slash (other than a trailing one) matches at any
//     depth: `*.tsx` matches `web/app/page.tsx`, `migrations/` matches
//     `db/migrations/1.sql`;
//   - a glob with one is anchored at the root: `cmd/*.go` matches
//     `cmd/app.go` and not `x/cmd/app.go`; so is one with a leading `/` or
//     `./`, which is then dropped (`./Makefile` is the root's Makefile);
//   - `**` as a whole segment matches any number of segments, none
//     included: `cmd/**/*.go`, `**/migrations`; a trailing `/**` (or `/`)
//     matches everything inside the folder and not the folder itself;
//   - a glob that matches a folder matches every file in it, as ignoring
//     a folder ignores its files: `migrations` matches `db/migrations/1.sql`;
//   - within a segment `*`, `?`, `[a-z]`, `[!a-z]` (or `[^a-z]`) and `\`
//     are path.Match's, and `{a,b}` lists alternatives, nested or not,
//     each read as a glob of its own (`{migrations/,*.sql}`);
//     `**` inside a segment (`**.ts`) is a plain `*`;
//   - matching is case-sensitive, as git's is by default.
//
// AlwaysGlob, which matches every path, is how Cursor's `alwaysApply` is
// kept: one field says where a memory applies, everywhere included.
const AlwaysGlob = "**"

// Glob limits: a rule file names a few globs, and each is short. Every
// road that stores a memory holds it to them (ValidateGlobs).
const (
	MaxGlobs     = 32
	MaxGlobBytes = 256
	// maxGlobAlternatives bounds what a glob's braces expand to, so that
	// `{a,b}{c,d}…` cannot make one match cost 2^n.
	maxGlobAlternatives = 64
)

// ErrInvalidGlob is what every glob a memory cannot carry is, to
// errors.Is; so is ErrInvalidText, since a glob is a text of the memory
// and refused as its other texts are.
var ErrInvalidGlob = errors.New("invalid path glob")

type globError struct{ msg string }

func (e *globError) Error() string { return e.msg }

func (e *globError) Is(target error) bool {
	return target == ErrInvalidGlob || target == ErrInvalidText
}

// globErrorf is an error that is ErrInvalidGlob, its message after it.
func globErrorf(format string, args ...any) error {
	return &globError{ErrInvalidGlob.Error() + fmt.Sprintf(format, args...)}
}

// ValidateGlobs checks a memory's globs: at most MaxGlobs, each one line
// of valid UTF-8 of at most MaxGlobBytes that compiles.
func ValidateGlobs(globs []string) error {
	if len(globs) > MaxGlobs {
		return globErrorf(": %d globs, the limit is %d; scope the memory to fewer paths, or to a folder (dir/**)", len(globs), MaxGlobs)
	}
	for i, g := range globs {
		if err := ValidateGlob(g); err != nil {
			if len(globs) > 1 {
				return &globError{fmt.Sprintf("%v (glob %d of %d)", err, i+1, len(globs))}
			}
			return err
		}
	}
	return nil
}

// ValidateGlob checks one glob (see AlwaysGlob for what it means). Like
// ValidateContent it never repeats the text it refused, which may hold
// anything a file or a model put there, a credential included.
func ValidateGlob(g string) error {
	return parseGlob(g, newGlobBuilder())
}

// parseGlob adds the glob g to b, or says why it is not one (and adds
// nothing).
func parseGlob(g string, b *globBuilder) error {
	switch {
	case !utf8.ValidString(g) || strings.ContainsFunc(g, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return globErrorf(": a glob must be one line of UTF-8 text without control characters")
	case len(g) > MaxGlobBytes:
		return globErrorf(": a glob of %d bytes, the limit is %d", len(g), MaxGlobBytes)
	case cleanGlob(g) == "":
		return globErrorf(": an empty glob; name files like migrations/** or *.tsx")
	}
	if err := compileGlob(g, b); err != nil {
		return globErrorf(": %v", err)
	}
	return nil
}

// NormalizeGlobs is the form a memory keeps its globs in: trimmed, in
// byte order, each once, nil for none, so that equal sets of globs are
// equal memories (and encode to equal lines in .acolyte/memories.jsonl).
func NormalizeGlobs(globs []string) []string {
	var out []string
	for _, g := range globs {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// MatchGlob reports whether the glob g matches the file at p, a
// slash-separated path relative to the repository root (see AlwaysGlob for
// the rules). An invalid glob or a path outside the root matches nothing.
func MatchGlob(g, p string) bool {
	return NewPathMatcher([]string{p}).Matches(CompileGlobs([]string{g}))
}

// MatchesAny reports whether any of globs matches any of the paths.
func MatchesAny(globs, paths []string) bool {
	return NewPathMatcher(paths).Matches(CompileGlobs(globs))
}

// cleanGlob drops what does not change a glob's meaning: surrounding
// space, a leading ./ or /.
func cleanGlob(g string) string {
	g = strings.TrimSpace(g)
	for {
		switch {
		case strings.HasPrefix(g, "./"):
			g = g[2:]
		case strings.HasPrefix(g, "/"):
			g = g[1:]
		default:
			return g
		}
	}
}

// compileGlob expands a glob's braces first and then reads each
// alternative as a glob of its own, so that {migrations/,*.sql} means what
// migrations/ and *.sql mean apart: a glob in braces matches what it
// matches alone. The alternatives go into b; on an error b is left as it
// was.
func compileGlob(g string, b *globBuilder) error {
	alts, err := expandBraces(strings.TrimSpace(g))
	if err != nil {
		return err
	}
	mark := b.mark()
	for _, alt := range alts {
		if err := compileAlternative(alt, b); err != nil {
			b.reset(mark)
			return err
		}
	}
	return nil
}

// compileAlternative compiles one glob without braces into b.
func compileAlternative(g string, b *globBuilder) error {
	// As in gitignore, a slash at the start or in the middle anchors the
	// glob; a trailing one does not. A leading ./ or / is dropped only
	// once it has anchored the glob.
	anchored := strings.Contains(strings.TrimRight(strings.TrimSpace(g), "/"), "/")
	g = cleanGlob(g)
	inside := false
	for {
		t, ok := strings.CutSuffix(g, "/")
		if !ok {
			break
		}
		g, inside = t, true
	}
	for {
		t, ok := strings.CutSuffix(g, "/**")
		if !ok || t == "" {
			break
		}
		g, inside = t, true
	}
	if g == "" {
		return errors.New("it names no file")
	}
	segs := b.segs[:0]
	if !anchored && g != "**" {
		segs = append(segs, starStar)
	}
	for n := 1; g != ""; n++ {
		s, rest, _ := strings.Cut(g, "/")
		g = rest
		if s == "" || s == "." {
			continue // a//b and a/./b are a/b, as a path would be cleaned
		}
		if s == "**" {
			if len(segs) == 0 || segs[len(segs)-1] != starStar {
				segs = append(segs, starStar)
			}
			continue
		}
		at, err := b.pattern(s)
		if err != nil {
			return fmt.Errorf("its part %d (between slashes) is not a valid pattern: check its [ ] and \\; write migrations/** or *.{ts,tsx}", n)
		}
		segs = append(segs, at)
	}
	b.segs = segs
	if len(segs) == 0 {
		return errors.New("it names no file")
	}
	b.add(segs, inside)
	return nil
}

// bangClass spells gitignore's negated class [!…] as path.Match's [^…].
func bangClass(s string) string {
	if !strings.Contains(s, "[!") {
		return s
	}
	b := []byte(s)
	for i := 0; i+1 < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '[':
			if b[i+1] == '!' {
				b[i+1] = '^'
			}
			// Skip to the class's end, so a ! inside it stays a !.
			for i++; i < len(b) && b[i] != ']'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return string(b)
}

// expandBraces expands {a,b} alternatives, outermost first, into at most
// maxGlobAlternatives globs. Braces inside a [class] or after \ are text.
func expandBraces(g string) ([]string, error) {
	open, close, commas := -1, -1, []int(nil)
	depth := 0
scan:
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '\\':
			i++
		case '[':
			for i++; i < len(g) && g[i] != ']'; i++ {
				if g[i] == '\\' {
					i++
				}
			}
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				return nil, errors.New("a } without its {")
			}
			if depth--; depth == 0 {
				close = i
				break scan
			}
		}
	}
	if depth > 0 {
		return nil, errors.New("a { without its }")
	}
	if open < 0 {
		return []string{g}, nil
	}
	head, tail := g[:open], g[close+1:]
	var out []string
	start := open + 1
	for _, end := range append(commas, close) {
		rest, err := expandBraces(head + g[start:end] + tail)
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
		if len(out) > maxGlobAlternatives {
			return nil, fmt.Errorf("its braces expand to more than %d alternatives", maxGlobAlternatives)
		}
		start = end + 1
	}
	return out, nil
}
