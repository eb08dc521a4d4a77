// Package secrets is the one credential detector every road into .acolyte/
// calls: remember, edits, rules, seeds, the merge driver and `acolyte check`.
// It knows nothing of git or of files, so that the file format
// (gitsync/format) and gitsync can both use it.
package secrets

import (
	"cmp"
	"encoding/base64"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/acolyte-dev/acolyte/internal/lazyre"
)

// Finding is one credential found in a text. It carries what kind of
// credential it is and where, and deliberately never the matched text: a
// caller cannot print, log or return in an error what it does not have, so
// a refusal never repeats the secret it refuses.
type Finding struct {
	// Kind is a human phrase that reads after "contains", such as
	// "an AWS secret access key".
	Kind string
	// Line is the 1-based line of text the credential starts on.
	Line int
	// Offset is the byte offset in text where the credential starts.
	Offset int
}

// Detect reports whether content contains a credential, and which
// kind, so a project-scope write can be refused before the secret is
// committed.
func Detect(content string) (what string, found bool) {
	hits := scanSecrets(content, 1)
	if len(hits) == 0 {
		return "", false
	}
	return hits[0].kind, true
}

// Find returns every credential in text, in the order they appear.
// Overlapping matches count once, as the most specific kind.
func Find(text string) []Finding {
	hits := scanSecrets(text, 0)
	if len(hits) == 0 {
		return nil
	}
	slices.SortFunc(hits, func(a, b secretHit) int { return a.start - b.start })
	out := make([]Finding, len(hits))
	line, counted := 1, 0
	for i, h := range hits {
		line += strings.Count(text[counted:h.start], "\n")
		counted = h.start
		out[i] = Finding{Kind: h.kind, Line: line, Offset: h.start}
	}
	return out
}

// secretRule recognises one kind of credential.
//
// Every acolyte process loads this package and most scan a few hundred
// bytes, so a rule costs nothing until used (lazyre.New) and its regexp
// only runs on the lines that hold one of its keywords, which one pass over
// the text finds for all rules (keywordIndex). Running every regexp over
// every byte, as this package once did, cost 7 ms at 8 KiB.
type secretRule struct {
	kind string
	// keywords are literal parts of every match (or of the context the rule
	// needs on the same line). Lower-case keywords are found ignoring ASCII
	// case; one with an upper-case letter must appear exactly.
	keywords []string
	// re finds candidates in one line; find replaces it for rules that a
	// regexp expresses badly.
	re   func() *regexp.Regexp
	find func(line string, hit func(start, end int))
	// check, when set, gets the line and re's submatch indices and rejects
	// placeholders and look-alikes. Without it a match is rejected only when
	// it reads as a placeholder.
	check func(line string, m []int) bool
	// span is the submatch that is the credential itself, when re also
	// matches the character before it to find where it starts.
	span int
}

type secretHit struct {
	kind       string
	start, end int
}

// token is a rule for a credential whose issuer gives it a fixed prefix.
func token(kind, expr string, keywords ...string) secretRule {
	return secretRule{kind: kind, keywords: keywords, re: lazyre.New(expr)}
}

// secretRules are the credentials that must never reach a tracked file,
// most specific first: where matches overlap, the earlier rule's kind is the
// one reported. Shapes follow the issuers' documented formats as catalogued
// by secret scanners such as gitleaks and trufflehog. The table is built on
// first use: as a package variable its closures cost every process, git
// hooks included, 160 allocations at start-up.
var secretRules = sync.OnceValue(func() []secretRule {
	issuers := []secretRule{
		// Private keys, and the service-account JSON that embeds one.
		{kind: "a Google Cloud service-account key", keywords: []string{"private_key"},
			re: lazyre.New(`"private_key"\s*:\s*"-----BEGIN`)},
		token("a private key", `-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d+:`, "-----BEGIN", "PuTTY-User-Key-File-"),

		// Cloud providers.
		{kind: "an AWS access key id", keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
			re: lazyre.New(`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
		// A secret access key has no prefix: forty base64 characters are only
		// taken for one when the line speaks of AWS.
		{kind: "an AWS secret access key", keywords: []string{"aws", "secret_access_key", "secretaccesskey"},
			re:    lazyre.New(`(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])`),
			check: func(line string, m []int) bool { return mixedCase(line[m[2]:m[3]]) && !isPlaceholder(line[m[2]:m[3]]) },
			span:  1},
		token("a Google API key", `\bAIza[0-9A-Za-z_-]{35}`, "AIza"),
		token("a Google OAuth client secret", `\bGOCSPX-[A-Za-z0-9_-]{28}`, "GOCSPX-"),
		{kind: "an Azure storage account key", keywords: []string{"accountkey=", "sharedaccesskey="},
			re:    lazyre.New(`(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9/+]{20,}={0,2})`),
			check: func(line string, m []int) bool { return randomValue(line[m[2]:m[3]]) }},
		{kind: "an Azure shared access signature", keywords: []string{"sig="},
			re:    lazyre.New(`(?:^|[?&;])sig=((?:[A-Za-z0-9/+]|%[0-9A-Fa-f]{2}){30,}={0,2})`),
			check: func(line string, m []int) bool { return randomValue(line[m[2]:m[3]]) }},
		{kind: "an Azure AD client secret", keywords: []string{"Q~"},
			re:   lazyre.New(`(?:^|[^A-Za-z0-9_~.-])([A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?:$|[^A-Za-z0-9_~.-])`),
			span: 1},
		token("a DigitalOcean token", `\bdo[por]_v1_[a-f0-9]{64}\b`, "_v1_"),
		{kind: "a Heroku API key", keywords: []string{"heroku", "HRKU-"},
			re: lazyre.New(`(?i:heroku)[A-Za-z0-9_ .,:="'-]{0,30}?\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b|\bHRKU-[A-Za-z0-9_-]{60}`)},
		token("a HashiCorp Vault token", `\bhv[sbr]\.[A-Za-z0-9_-]{24,}`, "hvs.", "hvb.", "hvr."),
		token("a Terraform Cloud token", `\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}`, ".atlasv1."),
		token("a Databricks token", `\bdapi[a-f0-9]{32}\b`, "dapi"),

		// Source hosting and package registries.
		token("a GitHub token", `\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`, "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
		token("a GitLab token", `\bgl(?:pat|dt|rt|ptt|cbt|ft|soat|oas)-[A-Za-z0-9_-]{20,}`, "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glsoat-", "gloas-"),
		token("a Bitbucket app password", `\bATBB[A-Za-z0-9_=.-]{28,}`, "ATBB"),
		token("an Atlassian API token", `\bAT(?:ATT|CTT)[A-Za-z0-9_=.-]{50,}`, "ATATT", "ATCTT"),
		token("an npm token", `\bnpm_[A-Za-z0-9]{36}\b`, "npm_"),
		token("a PyPI token", `\bpypi-AgE[A-Za-z0-9_-]{50,}`, "pypi-AgE"),
		token("a Docker Hub token", `\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}`, "dckr_"),

		// Chat.
		token("a Slack token", `\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+`, "xox", "xapp-"),
		token("a Slack webhook URL", `hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}`, "hooks.slack.com"),
		token("a Discord webhook URL", `(?i)discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,}`, "discord"),
		{kind: "a Discord bot token", keywords: []string{"discord", "bot"},
			re:    lazyre.New(`\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b`),
			check: func(line string, m []int) bool { return mixedCase(line[m[0]:m[1]]) }},
		token("a Telegram bot token", `\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b`, ":AA"),

		// Payments and commerce.
		token("a Stripe secret key", `\b(?:[sr]k_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[A-Za-z0-9+/]{24,})`, "sk_live_", "rk_live_", "sk_test_", "rk_test_", "whsec_"),
		token("a Square access token", `\b(?:sq0atp-[0-9A-Za-z_-]{22}|sq0csp-[0-9A-Za-z_-]{43}|EAAA[A-Za-z0-9_-]{60})`, "sq0atp-", "sq0csp-", "EAAA"),
		token("a PayPal Braintree access token", `access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}`, "access_token$"),
		token("a Shopify access token", `\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b`, "shpat_", "shpca_", "shppa_", "shpss_"),

		// Messaging and developer services.
		{kind: "a Twilio API key", keywords: []string{"SK"},
			re:    lazyre.New(`\bSK[0-9a-f]{32}\b`),
			check: func(line string, m []int) bool { return randomValue(line[m[0]+2 : m[1]]) }},
		token("a SendGrid API key", `\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b`, "SG."),
		{kind: "a Mailgun API key", keywords: []string{"key-"},
			re:    lazyre.New(`\bkey-[0-9a-z]{32}\b`),
			check: func(line string, m []int) bool { return randomValue(line[m[0]+4 : m[1]]) }},
		token("a Mailchimp API key", `\b[0-9a-f]{32}-us\d{1,2}\b`, "-us"),
		token("a Postman API key", `\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b`, "PMAK-"),
		token("a New Relic API key", `\bNR(?:AK|II)-[A-Za-z0-9]{27}\b`, "NRAK-", "NRII-"),
		token("a Linear API key", `\blin_api_[A-Za-z0-9]{40}\b`, "lin_api_"),
		token("a Doppler token", `\bdp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,}`, "dp."),
		token("a Pulumi access token", `\bpul-[a-f0-9]{40}\b`, "pul-"),
		token("a Grafana token", `\b(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})`, "glc_", "glsa_"),
		token("a Sentry token", `\bsntry[su]_[A-Za-z0-9+/=_-]{40,}`, "sntry"),
		token("a Notion token", `\b(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43}\b)`, "ntn_", "secret_"),
		token("an Airtable token", `\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b`, "pat"),
		token("an age secret key", `\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b`, "AGE-SECRET-KEY-1"),

		// Model providers.
		token("an Anthropic API key", `\bsk-ant-(?:api|admin|oat|sid)\d\d-[A-Za-z0-9_-]{20,}`, "sk-ant-"),
		{kind: "an OpenAI API key", keywords: []string{"sk-"},
			re: lazyre.New(`\bsk-(?:(?:proj|svcacct|admin|None)-([A-Za-z0-9_-]{20,})|([A-Za-z0-9]{32,}))\b`),
			check: func(line string, m []int) bool {
				if m[2] >= 0 {
					return randomValue(line[m[2]:m[3]]) && mixedCase(line[m[2]:m[3]])
				}
				return mixedCase(line[m[4]:m[5]])
			}},
		{kind: "a Hugging Face token", keywords: []string{"hf_"},
			re:    lazyre.New(`\bhf_[A-Za-z0-9]{34,40}\b`),
			check: func(line string, m []int) bool { return scrambledCase(line[m[0]+3 : m[1]]) }},
		token("a model provider API key", `\b(?:gsk_[A-Za-z0-9]{52}|xai-[A-Za-z0-9]{80}|pplx-[A-Za-z0-9]{48}|r8_[A-Za-z0-9]{37})\b`, "gsk_", "xai-", "pplx-", "r8_"),
	}
	general := []secretRule{
		// Credentials in general shapes.
		token("a JSON Web Token", `\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`, "eyJ"),
		{kind: "a password in a URL", keywords: []string{"://"},
			re:    lazyre.New(`\b[A-Za-z][A-Za-z0-9+.-]*://([^/\s:@]*):([^/\s@]+)@([^/\s:?#@]+)`),
			check: urlPassword},
		{kind: "a bearer token", keywords: []string{"bearer"},
			re:    lazyre.New(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)`),
			check: func(line string, m []int) bool { return randomValue(line[m[2]:m[3]]) }},
		{kind: "HTTP basic-auth credentials", keywords: []string{"basic"},
			re:    lazyre.New(`(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})`),
			check: func(line string, m []int) bool { return basicCredentials(line[m[2]:m[3]]) }},
		// The keywords are parts of passwordWords whose first two bytes are
		// rare in English, or already another keyword's: a common pair
		// (co, lo, ha) would send every line of prose through the rule.
		{kind: "a password", keywords: []string{"pass", "pwd", "pw", "seña", "sena", "senha", "twoord", "paro", "sło", "slo",
			"senord", "salasana", "gskode", "heslo", "lsz", "sifre", "şifre", "zinka", "kennwort", "пароль", "密码", "密碼", "パスワード", "비밀번호"},
			find: findAssignments(passwordName, passwordValue)},
		{kind: "a password", keywords: []string{"pass", "pwd", "pw"},
			find: findAssignments(barePasswordName, func(a assignment) bool { return passwordValue(a) && strongValue(a.value) })},
		{kind: "a secret key or token", keywords: []string{"secret", "token", "key", "cred", "auth"}, find: findAssignments(secretName, randomAssigned)},
	}
	return slices.Concat(issuers, vendorRules35(), familyRules(), general)
})

// scanSecrets returns the credentials in text, at most limit of them when
// limit > 0, in rule order: first as written, then, in the lines normalize
// would change, as it rewrites them, with offsets in text.
func scanSecrets(text string, limit int) []secretHit {
	hits := scanText(text, limit, nil)
	// A credential wrapped in base64 is named as what it decodes to, where
	// the rules took the run for a random value or missed it.
	if limit <= 0 || len(hits) < limit || slices.ContainsFunc(hits, func(h secretHit) bool { return h.kind == genericKind }) {
		hits = mergeBase64(hits, scanBase64(text, nil))
	}
	if !hasInvisible(text) && !hasSplit(text) {
		return hits
	}
	// Most texts have nothing to normalize, and a long one has a few such
	// lines: rewriting only them keeps the second scan to those lines.
	for start := 0; start < len(text) && (limit <= 0 || len(hits) < limit); {
		end := lineEnd(text, start)
		for end < len(text) {
			at := end
			if at > 0 && text[at-1] == '\r' {
				at--
			}
			if _, split := splitAt(text, at); !split {
				break
			}
			end = lineEnd(text, end+1)
		}
		if norm, origin, changed := normalize(text[start:end]); changed {
			for _, h := range scanText(norm, 0, nil) {
				h.start, h.end = start+origin[h.start], start+origin[h.end-1]+1
				if !overlapsAny(h, hits) {
					hits = append(hits, h)
				}
			}
		}
		start = end + 1
	}
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// lineEnd is the offset of the line break ending the line at start, or
// len(text).
func lineEnd(text string, start int) int {
	if e := strings.IndexByte(text[start:], '\n'); e >= 0 {
		return start + e
	}
	return len(text)
}

func overlapsAny(h secretHit, hits []secretHit) bool {
	for _, o := range hits {
		if h.start < o.end && o.start < h.end {
			return true
		}
	}
	return false
}

// scanText runs the rules over one text, adding to hits.
func scanText(text string, limit int, hits []secretHit) []secretHit {
	rules := secretRules()
	candidates := secretKeywords().candidates(text)
	for _, c := range candidates {
		r := &rules[c.rule]
		start := c.start
		end := start + strings.IndexByte(text[start:], '\n')
		if end < start {
			end = len(text)
		}
		line := text[start:end]
		add := func(s, e int) {
			h := secretHit{kind: r.kind, start: start + s, end: start + e}
			// Overlapping: the same text, already reported as a more
			// specific kind. A published example guards nothing.
			if !overlapsAny(h, hits) && !isDocumentedExample(line[s:e]) {
				hits = append(hits, h)
			}
		}
		if r.find != nil {
			r.find(line, add)
		} else {
			for _, m := range r.re().FindAllStringSubmatchIndex(line, -1) {
				if r.check != nil && !r.check(line, m) || r.check == nil && placeholderToken(line[m[0]:m[1]]) {
					continue
				}
				add(m[2*r.span], m[2*r.span+1])
			}
		}
		if limit > 0 && len(hits) >= limit {
			return hits
		}
	}
	return hits
}

// keywordIndex finds, in one pass over a text, the lines each rule must
// look at. Searching for each of a hundred keywords in turn cost 200µs on
// 8 KiB; looking up every byte pair of the text in a table of the
// keywords' first two bytes costs a tenth of that.
type keywordIndex struct {
	// present has a bit for each lower-cased pair of bytes that starts a
	// keyword: at 8 KiB it stays in the L1 cache, which bucket does not.
	present [1 << 16 / 64]uint64
	// bucket maps such a pair to 1 + its index in buckets.
	bucket  [1 << 16]uint8
	buckets [][]keywordRef
	lower   [256]byte
}

type keywordRef struct {
	lower string // the keyword lower-cased
	exact string // the keyword as it must appear, or "" to ignore case
	rule  int
}

// secretKeywords is built on first use, like the rules' regexps, so that
// processes that never scan for secrets never pay for it.
var secretKeywords = sync.OnceValue(func() *keywordIndex {
	ix := &keywordIndex{}
	for ri, r := range secretRules() {
		for _, kw := range r.keywords {
			ref := keywordRef{lower: asciiLower(kw), rule: ri}
			if ref.lower != kw {
				ref.exact = kw
			}
			pair := uint16(ref.lower[0])<<8 | uint16(ref.lower[1])
			if ix.bucket[pair] == 0 {
				if len(ix.buckets) == 255 {
					panic("gitsync: more than 255 first byte pairs among the secret keywords; widen keywordIndex.bucket")
				}
				ix.buckets = append(ix.buckets, nil)
				ix.bucket[pair] = uint8(len(ix.buckets))
			}
			b := ix.bucket[pair] - 1
			ix.buckets[b] = append(ix.buckets[b], ref)
			ix.present[pair/64] |= 1 << (pair % 64)
		}
	}
	for c := range ix.lower {
		ix.lower[c] = lowerByte(byte(c))
	}
	return ix
})

// candidate is a line, by its start offset, that a rule must look at.
type candidate struct {
	rule, start int
}

// candidates returns the lines holding a keyword of each rule, in rule
// order and then text order, once each.
func (ix *keywordIndex) candidates(text string) []candidate {
	var out []candidate
	lineStart := 0
	if len(text) < 2 {
		return nil
	}
	pair := uint16(ix.lower[text[0]])
	for i := 0; i+1 < len(text); i++ {
		pair = pair<<8 | uint16(ix.lower[text[i+1]])
		if ix.present[pair/64]&(1<<(pair%64)) == 0 {
			if text[i] == '\n' {
				lineStart = i + 1
			}
			continue
		}
		for _, kw := range ix.buckets[ix.bucket[pair]-1] {
			if kw.exact != "" && strings.HasPrefix(text[i:], kw.exact) || kw.exact == "" && hasPrefixFold(text[i:], kw.lower) {
				out = append(out, candidate{rule: kw.rule, start: lineStart})
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	slices.SortFunc(out, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.rule, b.rule), cmp.Compare(a.start, b.start))
	})
	return slices.Compact(out)
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case; prefix is lower
// case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lowerByte(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

// asciiLower lowers ASCII letters only, so offsets in the result are
// offsets in s.
func asciiLower(s string) string {
	i := 0
	for i < len(s) && !('A' <= s[i] && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

// urlPassword accepts the password of scheme://user:password@host unless it
// is a placeholder, or a default credential of a service on this machine
// (postgres://postgres:postgres@localhost) that guards nothing.
func urlPassword(line string, m []int) bool {
	user, pass, host := line[m[2]:m[3]], line[m[4]:m[5]], strings.ToLower(line[m[6]:m[7]])
	if isPlaceholder(pass) || pass == user {
		return false
	}
	local := host == "localhost" || host == "0.0.0.0" || host == "[::1]" || strings.HasPrefix(host, "127.") ||
		strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".local") || host == "host.docker.internal" ||
		strings.HasPrefix(host, "example.") || strings.Contains(host, ".example.")
	if !local {
		return true
	}
	switch strings.ToLower(pass) {
	case "postgres", "guest", "root", "admin", "mysql", "redis", "test", "dev", "local", "pass", "secret", "rabbitmq", "mongo":
		return false
	}
	return true
}

// basicCredentials accepts a basic-auth value that decodes to user:password.
func basicCredentials(v string) bool {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "="))
	}
	if err != nil {
		return false
	}
	for _, c := range b {
		if c < ' ' || c > '~' {
			return false // binary: a word that happens to be valid base64
		}
	}
	user, pass, ok := strings.Cut(string(b), ":")
	return ok && user != "" && pass != "" && !isPlaceholder(pass)
}

// Assignments: NAME=value, name: value, "name": "value", name := "value".

// assignment is the value given to a credential-like name.
type assignment struct {
	value  string
	quoted bool
	// prose is an unquoted value after a colon that more words follow:
	// "Password: reset it from the console" is a sentence.
	prose bool
	// code is an assignment or comparison in a program (a := b, a == b,
	// a = b with spaces), where an unquoted value is usually a variable.
	code bool
	// tight is an unquoted value right after a colon (password:xyz), which
	// YAML does not allow: a URI or a label, not a setting.
	tight bool
}

// findAssignments returns a finder for assignments whose name passes
// nameOK and whose value passes valueOK.
func findAssignments(nameOK func(lowerName, name string) bool, valueOK func(assignment) bool) func(line string, hit func(start, end int)) {
	return func(line string, hit func(start, end int)) {
		// Prose has few = and :, so the search starts from them and walks
		// back to the name.
		for from := 0; from < len(line); {
			p := strings.IndexAny(line[from:], "=:")
			if p < 0 {
				return
			}
			p += from
			from = p + 1
			if p > 0 && strings.IndexByte(":=!<>", line[p-1]) >= 0 {
				continue // the second character of :=, ==, != ...
			}
			k := p
			for k > 0 && (line[k-1] == ' ' || line[k-1] == '\t') {
				k--
			}
			if k > 0 && (line[k-1] == '"' || line[k-1] == '\'') {
				k--
			}
			j := k
			for j > 0 && identByte(line[j-1]) {
				j--
			}
			if j == k {
				continue
			}
			a, end, ok := assignedValue(line, k)
			if !ok {
				continue
			}
			name := strings.TrimLeft(line[j:k], "-_.")
			if name == "" || !nameOK(asciiLower(name), name) {
				continue
			}
			if valueOK(a) && !sameWord(a.value, name) {
				hit(j, end)
				from = end
			}
		}
	}
}

// identByte accepts the bytes of a setting's name; bytes of UTF-8
// sequences count, so that names in other languages (contraseña, hasło,
// пароль) are read whole.
func identByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-' || c >= 0x80
}

// maxValue bounds the value of an assignment, so that a long line of
// a=a=a=... costs linear time, not quadratic; credentials longer than
// this are private keys and certificates, found by their own rules.
const maxValue = 1024

// assignedValue finds the value assigned after a name ending at k: an
// optional closing quote, then =, :, :=, => or ==, then the value, quoted or
// up to the next space or delimiter. end is where the value ends in line.
func assignedValue(line string, k int) (a assignment, end int, ok bool) {
	i := k
	if i < len(line) && (line[i] == '"' || line[i] == '\'') {
		i++
	}
	spaced := false
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
		spaced = true
	}
	colon := false
	switch rest := line[i:]; {
	case strings.HasPrefix(rest, ":="), strings.HasPrefix(rest, "=>"), strings.HasPrefix(rest, "=="):
		a.code = true
		i += 2
	case strings.HasPrefix(rest, "="):
		i++
		switch {
		case i == len(line):
			return a, 0, false
		case line[i] == ' ' || line[i] == '\t':
			if !spaced {
				return a, 0, false // NAME= value: NAME is set empty for a command
			}
			a.code = true
		}
	case strings.HasPrefix(rest, ":"):
		colon = true
		i++
		a.tight = i < len(line) && line[i] != ' ' && line[i] != '\t'
	default:
		return a, 0, false
	}
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i < len(line) && (line[i] == '"' || line[i] == '\'' || line[i] == '`') {
		q := line[i]
		e := strings.IndexByte(line[i+1:min(len(line), i+1+maxValue)], q)
		if e <= 0 {
			return a, 0, false
		}
		a.value, a.quoted = line[i+1:i+1+e], true
		return a, i + 1 + e, true
	}
	e := i
	for e < len(line) && e-i < maxValue && !strings.ContainsRune(" \t\r\"'`,;)}]&", rune(line[e])) {
		e++
	}
	if e == i || e-i == maxValue {
		return a, 0, false
	}
	a.value = line[i:e]
	a.prose = colon && (isProseAfter(line[e:]) || strings.HasSuffix(a.value, "."))
	return a, e, true
}

// isProseAfter reports whether the rest of a line after an unquoted value
// reads as a sentence ("password: reset it from the console", "Password:
// User's password.") rather than the end of a setting or a trailing
// comment.
func isProseAfter(rest string) bool {
	rest = strings.TrimLeft(rest, " \t'")
	return rest != "" && ('a' <= rest[0] && rest[0] <= 'z' || 'A' <= rest[0] && rest[0] <= 'Z')
}

// nameEnds reports whether lowerName's last word is one of words: a whole
// name, or a suffix after a separator, a case change or a glued-on word
// (PGPASSWORD, apikey).
func nameEnds(lowerName, name string, glued bool, words ...string) (string, bool) {
	for _, w := range words {
		if !strings.HasSuffix(lowerName, w) {
			continue
		}
		at := len(lowerName) - len(w)
		if at == 0 || glued {
			return lowerName[:at], true
		}
		prev := name[at-1]
		if prev == '_' || prev == '-' || prev == '.' || 'a' <= prev && prev <= 'z' && 'A' <= name[at] && name[at] <= 'Z' {
			return lowerName[:at], true
		}
	}
	return "", false
}

// passwordWords name a password in the languages acolyte's users write
// notes in; a name ending in one is a password setting (DB_PASSWORD,
// Passwort, contraseña, mot_de_passe, hasło, пароль).
var passwordWords = []string{"password", "passwd", "passphrase", "passwort", "kennwort", "contraseña", "contrasena",
	"senha", "wachtwoord", "parool", "parola", "hasło", "haslo", "lösenord", "losenord", "salasana", "adgangskode",
	"passord", "heslo", "jelszó", "jelszo", "şifre", "sifre", "geslo", "lozinka", "motdepasse", "mot_de_passe",
	"пароль", "密码", "密碼", "パスワード", "비밀번호"}

func passwordName(lowerName, name string) bool {
	if _, ok := nameEnds(lowerName, name, true, passwordWords...); ok {
		return true
	}
	// "mot de passe : X" reaches here as the name "passe".
	if lowerName == "passe" {
		return true
	}
	// Alone, PASS, PWD and PW are a test's verdict, the working directory
	// and an abbreviation in prose; as the end of a name, a password.
	// (barePasswordName takes them alone, for strong values only.)
	before, ok := nameEnds(lowerName, name, false, "pass", "pwd", "pw")
	return ok && strings.Trim(before, "-_.") != ""
}

// barePasswordName is PASS, PWD and PW alone ("login: ops / pass: X"),
// which barePasswordValue accepts only with a value no verdict, path or
// word looks like.
func barePasswordName(lowerName, _ string) bool {
	return lowerName == "pass" || lowerName == "pwd" || lowerName == "pw"
}

// secretName accepts names ending in secret, token, key and the like,
// except keys and tokens that are not credentials (a public key, a sort
// key, a pagination token).
func secretName(lowerName, name string) bool {
	before, ok := nameEnds(lowerName, name, true, "secret", "token", "apikey", "credential", "credentials")
	if !ok {
		before, ok = nameEnds(lowerName, name, false, "key", "auth")
	}
	if !ok {
		return false
	}
	before = strings.TrimRight(before, "-_.")
	for _, harmless := range []string{"public", "pub", "primary", "foreign", "sort", "partition", "cache", "idempotency",
		"lookup", "map", "row", "composite", "unique", "hot", "shortcut", "next", "page", "pagination", "continuation",
		"cursor", "cancellation", "cancel", "sync", "csrf", "xsrf", "max"} {
		if strings.HasSuffix(before, harmless) {
			return false
		}
	}
	return true
}

// passwordValue accepts any value a password setting could really hold:
// everything but placeholders, references to where the password lives, and
// the words that describe a password field rather than fill it.
func passwordValue(a assignment) bool {
	v := a.value
	if a.prose || a.tight || len(v) < 4 || isPlaceholder(v) || isReference(v) || v[0] == '/' {
		return false
	}
	if a.code && !a.quoted && (isIdentifier(v) && !looksRandom(v) || isNumber(v) || strings.ContainsAny(v, "[]{}<>.")) {
		return false // password = defaultPassword, = os.Args[1], = 0x115: code
	}
	switch strings.ToLower(v) {
	case "string", "required", "optional", "bool", "boolean", "true", "false", "null", "nil", "none", "empty",
		"undefined", "hidden", "masked", "omitted", "unset", "blank", "text", "value", "same", "prompt", "stdin":
		return false
	}
	return true
}

// randomAssigned accepts machine-made values for key, secret and token
// settings, where a word or an identifier would be a name, not a secret.
func randomAssigned(a assignment) bool {
	v := a.value
	// A secret is one word of base64, hex or similar: code, lists and
	// templates are not.
	if a.prose || a.tight || a.code && !a.quoted || len(v) < 12 || strings.ContainsAny(v, " \t[]{}()<>,|`*\\") || v[0] == '/' ||
		strings.Count(v, ":") > 1 || isPathLike(v) || isSequence(v) || strings.Contains(v, "://") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") ||
		strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "/") && strings.Count(v, "/") > 1 || isReference(v) {
		return false
	}
	return randomValue(v)
}

// isPathLike recognises paths and resource names (zones/us-central1-a,
// google.com/tool.profiles/x): separated by slashes, no part long enough
// to be random data.
func isPathLike(v string) bool {
	if !strings.Contains(v, "/") {
		return false
	}
	run := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '=' {
			if run++; run >= 16 {
				return false
			}
		} else {
			run = 0
		}
	}
	return true
}

// isSequence recognises the made-up values of documentation
// (abcdefghijk123456789), which random data does not contain.
func isSequence(v string) bool {
	lower := strings.ToLower(v)
	return strings.Contains(lower, "abcdefg") || strings.Contains(lower, "1234567")
}

// randomValue accepts values that look generated: letters mixed with digits
// or symbols, or long runs of scrambled case, with the character variety of
// random data.
func randomValue(v string) bool {
	return len(v) >= 8 && !isPlaceholder(v) && (looksRandom(v) || len(v) >= 20 && scrambledCase(v)) && entropy(v) >= 3
}

// scrambledCase accepts letters whose case varies as random base62 does,
// a quarter or more of each, unlike camelCase identifiers, which
// capitalise one letter a word.
func scrambledCase(v string) bool {
	var upper, lower int
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'A' <= c && c <= 'Z':
			upper++
		case 'a' <= c && c <= 'z':
			lower++
		}
	}
	return 4*upper >= upper+lower && 4*lower >= upper+lower
}

// isReference recognises values that name where a secret lives rather than
// hold it: an environment variable name, a dotted path into a config object,
// a function call.
func isReference(v string) bool {
	if strings.Contains(v, "(") {
		return true
	}
	upperName := true
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			upperName = false
		}
	}
	if upperName && strings.Contains(v, "_") {
		return true
	}
	if !strings.Contains(v, ".") {
		return false
	}
	for seg := range strings.SplitSeq(v, ".") {
		if len(seg) >= 16 && mixedCase(seg) {
			return false // a token with dots in it (Vault's s., Doppler's dp.st.), not a path
		}
	}
	for seg := range strings.SplitSeq(v, ".") {
		if seg == "" || !('a' <= seg[0] && seg[0] <= 'z' || 'A' <= seg[0] && seg[0] <= 'Z' || seg[0] == '_') {
			return false
		}
		for i := 0; i < len(seg); i++ {
			if !identByte(seg[i]) || seg[i] == '-' {
				return false
			}
		}
	}
	return true
}

func isNumber(v string) bool {
	v = strings.TrimPrefix(strings.TrimPrefix(v, "0x"), "0X")
	for i := 0; i < len(v); i++ {
		if c := lowerByte(v[i]); !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || c == '_') {
			return false
		}
	}
	return v != ""
}

func isIdentifier(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return v != ""
}

// sameWord reports whether a value repeats its setting's name
// (password: password, token=TOKEN, "generateKey": "generateKey1024"),
// as tables of names do.
func sameWord(v, name string) bool {
	name = strings.Trim(name, "-_.\"'")
	return len(v) >= len(name) && strings.EqualFold(v[:len(name)], name)
}

// looksRandom accepts values that mix letters with digits or symbols, as
// generated secrets do, and rejects words, numbers, identifiers and
// environment variable names.
func looksRandom(v string) bool {
	var letters, digits, symbols, lower int
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'A' <= c && c <= 'Z':
			letters++
		case 'a' <= c && c <= 'z':
			letters++
			lower++
		case '0' <= c && c <= '9':
			digits++
		case c != '_' && c != '-' && c != '.':
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

// mixedCase accepts values holding upper- and lower-case letters and a
// digit, as base64 and base62 secrets of any length do and hex digests and
// words do not.
func mixedCase(v string) bool {
	var upper, lower, digit bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		upper = upper || 'A' <= c && c <= 'Z'
		lower = lower || 'a' <= c && c <= 'z'
		digit = digit || '0' <= c && c <= '9'
	}
	return upper && lower && digit
}

// entropy is the Shannon entropy of v's bytes in bits per byte: random
// base64 of 16 bytes or more scores above 3.5, identifiers and dates
// below 3.
func entropy(v string) float64 {
	var counts [256]int
	for i := 0; i < len(v); i++ {
		counts[v[i]]++
	}
	h, n := 0.0, float64(len(v))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// placeholderToken recognises a prefixed token filled in by hand:
// ghp_xxxxxxxx…, sk_live_YOUR_KEY_HERE…, AKIAIOSFODNN7EXAMPLE.
func placeholderToken(m string) bool {
	lower := strings.ToLower(m)
	for _, word := range []string{"example", "xxxxxx", "your", "placeholder", "redacted", "000000000000"} {
		if strings.Contains(lower, word) {
			return true
		}
	}
	return false
}

// isPlaceholder recognises values that stand for a secret without being
// one: references, templates and the usual examples.
func isPlaceholder(v string) bool {
	if v == "" || strings.ContainsAny(v[:1], "$<{%*![") || strings.Trim(v, "*xX.#•-_") == "" {
		return true
	}
	lower := strings.ToLower(v)
	for _, word := range []string{"example", "placeholder", "changeme", "change_me", "change-me", "your", "redacted",
		"xxxx", "dummy", "getenv", "environ", "env.", "secrets.", "{{", "${"} {
		if strings.Contains(lower, word) {
			return true
		}
	}
	switch lower {
	case "password", "pass", "passwd", "pwd", "secret", "token", "key", "apikey", "api_key", "...":
		return true
	}
	return strings.Contains(v, "(")
}
