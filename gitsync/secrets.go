package gitsync

import (
	"regexp"
	"strings"
	"unicode"
)

// secretPattern recognises one kind of credential. check, when set, rejects
// matches that are placeholders rather than secrets.
type secretPattern struct {
	what  string
	re    func() *regexp.Regexp
	check func(match []string) bool
}

// secretPatterns are the credentials that must never reach a tracked file.
// Token formats come from their issuers' documented prefixes; the generic
// rules only fire on values that look machine-made (letters mixed with digits
// or symbols), which keeps prose like "the API key is read from
// GEMINI_API_KEY" from triggering.
var secretPatterns = []secretPattern{
	{what: "a private key", re: lazyRegexp(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)},
	{what: "an AWS access key id", re: lazyRegexp(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`)},
	{what: "a GitHub token", re: lazyRegexp(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`)},
	{what: "a Slack token", re: lazyRegexp(`\bxox[abposre]-[A-Za-z0-9-]{10,}`)},
	{what: "a Slack webhook URL", re: lazyRegexp(`hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+`)},
	{what: "a Google API key", re: lazyRegexp(`\bAIza[0-9A-Za-z_-]{35}`)},
	{what: "a Stripe secret key", re: lazyRegexp(`\b[sr]k_(?:live|test)_[0-9A-Za-z]{16,}`)},
	{what: "an OpenAI or Anthropic API key", re: lazyRegexp(`\bsk-(?:ant-[a-z0-9]+-|proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})`),
		check: func(m []string) bool { return looksRandom(m[1]) }},
	{what: "a JSON Web Token", re: lazyRegexp(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{what: "a password in a URL", re: lazyRegexp(`\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:([^/\s@]+)@[A-Za-z0-9.-]`),
		check: func(m []string) bool { return !isPlaceholder(m[1]) }},
	{what: "a credential assignment", re: lazyRegexp(`(?i)\b[A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|api[_-]?key|apikey|access[_-]?key|token|credentials?)["']?\s*[:=]\s*["']?([^\s"'<>,;]{8,})`),
		check: func(m []string) bool { return !isPlaceholder(m[1]) && looksRandom(m[1]) }},
}

// DetectSecret reports whether content contains a credential, and which
// kind, so a project-scope write can be refused before the secret is
// committed.
func DetectSecret(content string) (what string, found bool) {
	for _, p := range secretPatterns {
		for _, m := range p.re().FindAllStringSubmatch(content, -1) {
			if p.check == nil || p.check(m) {
				return p.what, true
			}
		}
	}
	return "", false
}

// looksRandom accepts values that mix letters with digits or symbols, as
// generated secrets do, and rejects words, numbers, identifiers and
// environment variable names.
func looksRandom(v string) bool {
	var letters, digits, symbols, upper, lower int
	for _, r := range v {
		switch {
		case unicode.IsUpper(r):
			letters++
			upper++
		case unicode.IsLower(r):
			letters++
			lower++
		case unicode.IsDigit(r):
			digits++
		case r != '_' && r != '-' && r != '.':
			symbols++
		}
	}
	if letters == 0 {
		return false
	}
	if lower == 0 && symbols == 0 && strings.ContainsRune(v, '_') {
		return false // an environment variable name like GEMINI_API_KEY
	}
	return digits > 0 || symbols > 0
}

// isPlaceholder recognises values that stand for a secret without being
// one: references, templates and the usual examples.
func isPlaceholder(v string) bool {
	lower := strings.ToLower(v)
	if strings.ContainsAny(v[:1], "$<{%*") || strings.Trim(v, "*x.X") == "" {
		return true
	}
	for _, word := range []string{"example", "placeholder", "changeme", "your", "redacted", "xxxx", "getenv", "environ", "env.", "secrets."} {
		if strings.Contains(lower, word) {
			return true
		}
	}
	switch lower {
	case "password", "pass", "passwd", "pwd", "secret", "token":
		return true
	}
	return strings.Contains(v, "(")
}
