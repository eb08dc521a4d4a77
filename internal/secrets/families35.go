package secrets

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/internal/lazyre"
)

// vendorRules35 are the families a red team's table of 83 credentials
// showed passing on every road (issue 35): chat and CI webhooks and
// tokens, platform and SaaS tokens, social API tokens, framework secrets,
// Oracle connect strings and an API key header. Each has the shape its
// issuer documents; one without a prefix of its own (a CircleCI token, an
// old Pinecone key) counts only where the line names its issuer.
func vendorRules35() []secretRule {
	return []secretRule{
		token("a Microsoft Teams webhook URL",
			`(?:webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)/[0-9a-f-]{36}@[0-9a-f-]{36}/IncomingWebhook/[0-9a-f]{32}/[0-9a-f-]{36}|logic\.azure\.com(?::\d+)?/workflows/[0-9a-f]{32}/triggers/\S*?[?&]sig=[A-Za-z0-9_%-]{30,}`,
			"webhook.office", "outlook.office", "logic.azure.com"),
		token("a CircleCI token", `\bCCIP(?:AT|RJ)_[A-Za-z0-9]{20,}_[a-f0-9]{40}\b`, "CCIPAT_", "CCIPRJ_"),
		{kind: "a CircleCI token", keywords: []string{"circle"},
			re:   lazyre.New(`(?i)\bcircle[-_ ]?(?:ci)?[^\n]{0,40}?(?:token|api[-_ ]?key)[^\n]{0,20}?\b([a-f0-9]{40})\b`),
			span: 1},
		token("a JFrog token", `\bAKCp[A-Za-z0-9]{60,80}\b|\bcmVmdGtuOjAx[A-Za-z0-9+/]{40,}={0,2}`, "AKCp", "cmVmdGtuOjAx"),
		token("a Fly.io token", `\bFlyV1 fm[12][a-z]?_[A-Za-z0-9+/=_-]{40,}|\bfm[12][a-z]?_[A-Za-z0-9+/]{100,}={0,2}|\bfo1_[A-Za-z0-9_-]{39,}`,
			"FlyV1", "fm1_", "fm2_", "fm1a_", "fm2a_", "fm1r_", "fm2r_", "fo1_"),
		token("a Netlify token", `\bnf[pcobu]_[A-Za-z0-9]{36}\b`, "nfp_", "nfc_", "nfo_", "nfb_", "nfu_"),
		{kind: "a Render API key", keywords: []string{"rnd_"},
			re:    lazyre.New(`\brnd_[A-Za-z0-9]{32,}\b`),
			check: func(line string, m []int) bool { return mixedCase(line[m[0]+4 : m[1]]) }},
		// Asana's personal access tokens: 1/USER:HEX or 2/USER/APP:HEX,
		// the ids being Asana's 16-digit gids, which start with 1.
		token("an Asana token", `\b[12]/\d{13,19}(?:/\d{13,19})?:[a-f0-9]{32}\b`, "asana", "1/1", "2/1"),
		token("a Dropbox token", `\bsl\.(?:u\.)?[A-Za-z0-9_-]{130,}|\b[a-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_-]{43}\b`, "sl.", "AAAAAAAAAA"),
		token("a Figma token", `\bfig[dour]_[A-Za-z0-9_-]{38,}`, "figd_", "figo_", "figu_", "figr_"),
		token("a Contentful token", `\bCFPAT-[A-Za-z0-9_-]{43}\b`, "CFPAT-"),
		token("a Shippo API token", `\bshippo_(?:live|test)_[a-f0-9]{40}\b`, "shippo_"),
		token("a Pinecone API key", `\bpcsk_[A-Za-z0-9]{4,10}_[A-Za-z0-9]{40,}`, "pcsk_"),
		{kind: "a Pinecone API key", keywords: []string{"pinecone"},
			re:   lazyre.New(`(?i)pinecone[^\n]{0,40}?\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b`),
			span: 1},
		// An app-only bearer token opens with a run of A's (its zero
		// bytes, base64'd); a user's access token is their numeric id, a
		// dash and forty characters.
		{kind: "a Twitter/X bearer token", keywords: []string{"AAAAAAAAAAAAAAAAAA"},
			re:    lazyre.New(`\bA{18,}[A-Za-z0-9%]{60,}`),
			check: func(line string, m []int) bool { return mixedCase(line[m[0]:m[1]]) }},
		{kind: "a Twitter/X access token", keywords: []string{"twitter", "tweet", "access token", "access_token", "oauth_token"},
			re:    lazyre.New(`\b\d{15,20}-[A-Za-z0-9]{40}\b`),
			check: func(line string, m []int) bool { return mixedCase(line[m[0]:m[1]]) }},
		{kind: "a Facebook access token", keywords: []string{"EAA"},
			re:    lazyre.New(`\bEAA[B-Z][A-Za-z0-9]{90,}`),
			check: func(line string, m []int) bool { return mixedCase(line[m[0]:m[1]]) }},
		// Django's SECRET_KEY is fifty characters of letters, digits and
		// !@#$%^&*(-_=+), which the general assignment rule takes for code.
		{kind: "a Django secret key", keywords: []string{"secret_key"},
			re: lazyre.New(`\bSECRET_KEY\s*[:=]\s*[rb]?(?:'([^'\n]{30,})'|"([^"\n]{30,})")`),
			check: func(line string, m []int) bool {
				var v string
				if m[2] >= 0 {
					v = line[m[2]:m[3]]
				} else {
					v = line[m[4]:m[5]]
				}
				// Parentheses are the key's own characters here, not a call
				// (isPlaceholder's test): the value is quoted.
				return !placeholderToken(v) && !strings.Contains(strings.ToLower(v), "change") && !strings.ContainsAny(v[:1], "$<{%") &&
					(strings.HasPrefix(v, "django-insecure-") || entropy(v) >= 4)
			}},
		{kind: "a Rails secret_key_base", keywords: []string{"secret_key_base"},
			re:    lazyre.New(`\bsecret_key_base\s*[:=]\s*['"]?([0-9a-f]{64,})\b`),
			check: func(line string, m []int) bool { return entropy(line[m[2]:m[3]]) >= 3.5 },
			span:  1},
		// user/password@connect-identifier, as sqlplus and Oracle's JDBC
		// thin driver read it.
		{kind: "an Oracle connect string with a password", keywords: []string{"sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl", "sqlcl", "jdbc:oracle"},
			re:    lazyre.New(`(?i)(?:\b(?:sqlplus|rman|expdp|impdp|sqlldr|dgmgrl|sqlcl)(?:\s+-\S+)*\s+|jdbc:oracle:(?:thin|oci):)[A-Za-z][\w$#.]*/("[^"\s]+"|[^\s@/"]+)@`),
			check: func(line string, m []int) bool { return commandValue(strings.Trim(line[m[2]:m[3]], `"`)) },
			span:  1},
		// An API key sent as a header: X-API-Key and its kin.
		// The name has its hyphen, as a header's does: a struct's APIKey:
		// or a YAML apikey: is an assignment, which the general rules read.
		{kind: "an API key header", keywords: []string{"api-key", "api-token", "auth-token", "access-token"},
			re: lazyre.New(`(?i)\b(?:x-)?(?:api-key|api-token|auth-token|access-token)\s*:\s*['"]?([A-Za-z0-9_\-.+/=~]{16,})`),
			check: func(line string, m []int) bool {
				v := line[m[2]:m[3]]
				return !isPlaceholder(v) && !placeholderToken(v) && !isPathLike(v) && (randomValue(v) || isHex(v) && len(v) >= 32)
			},
			span: 1},
	}
}

func isHex(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return v != ""
}

// base64Context is how much of the line on either side of a run of
// base64 is read with what it decodes to.
const base64Context = 128

// genericKind is the general assignment rules' kind, which a more
// specific one found in the same decoded text replaces.
const genericKind = "a secret key or token"

// minBase64 is the shortest run of base64 read as a wrapped credential:
// eight bytes encoded ("hunter22"), the least a password rule takes.
const minBase64 = 12

// scanBase64 finds credentials wrapped in base64 (a Kubernetes Secret's
// data, `echo … | base64 -d`): each run of base64 in a line that decodes
// to printable text is read in its place, and a credential the rules
// find in what it decodes to is reported over the run, as "a
// base64-encoded" kind. The decoded text is scanned once, never decoded
// again. mergeBase64 decides between these and the plain scan's hits.
func scanBase64(text string, hits []secretHit) []secretHit {
	for start := 0; start < len(text); {
		end := lineEnd(text, start)
		line := text[start:end]
		for _, run := range base64Runs(line) {
			decoded, ok := decodePrintable(line[run[0]:run[1]])
			if !ok {
				continue
			}
			// The run is read in its place, with the words around it that
			// name it ("password: …"), not the whole line: a line of many
			// runs then costs its length, not its length times theirs.
			from, to := max(0, run[0]-base64Context), min(len(line), run[1]+base64Context)
			swapped := line[from:run[0]] + decoded + line[run[1]:to]
			at := run[0] - from
			kind := ""
			for _, h := range scanText(swapped, 0, nil) {
				if h.start >= at+len(decoded) || h.end <= at {
					continue // found beside the run: the plain scan reports it
				}
				if kind == "" || kind == genericKind {
					kind = h.kind // the most specific the decoded text holds
				}
			}
			if kind == "" {
				continue
			}
			kind = strings.TrimPrefix(strings.TrimPrefix(kind, "an "), "a ")
			if b := (secretHit{kind: "a base64-encoded " + kind, start: start + run[0], end: start + run[1]}); !overlapsAny(b, hits) {
				hits = append(hits, b)
			}
		}
		start = end + 1
	}
	return hits
}

// base64Runs are the runs of base64 (standard or URL-safe) in line of at
// least minBase64 characters with a digit or both cases, as [start, end).
func base64Runs(line string) [][2]int {
	var out [][2]int
	for i := 0; i < len(line); {
		if base64Class[line[i]] == 0 {
			i++
			continue
		}
		j := i
		var seen byte
		for j < len(line) && base64Class[line[j]] != 0 {
			seen |= base64Class[line[j]]
			j++
		}
		for j < len(line) && line[j] == '=' && j-i < 4096 {
			j++
		}
		if j-i >= minBase64 && (seen&classDigit != 0 || seen&(classUpper|classLower) == classUpper|classLower) {
			out = append(out, [2]int{i, j})
		}
		i = j + 1
	}
	return out
}

const (
	classUpper = 1 << iota
	classLower
	classDigit
	classOther
)

// base64Class is each byte's class in base64's alphabets, 0 outside them.
var base64Class = func() (t [256]byte) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = classUpper
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = classLower
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = classDigit
	}
	for _, c := range "+/-_" {
		t[c] = classOther
	}
	return t
}()

// decodePrintable decodes s as base64 of any of the four alphabets and
// says whether it decodes to one line of printable text.
func decodePrintable(s string) (string, bool) {
	var b []byte
	var err error
	raw := strings.TrimRight(s, "=")
	if strings.ContainsAny(raw, "-_") {
		b, err = base64.RawURLEncoding.DecodeString(raw)
	} else {
		b, err = base64.RawStdEncoding.DecodeString(raw)
	}
	if err != nil || len(b) < 8 || !utf8.Valid(b) {
		return "", false
	}
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return "", false
		}
	}
	return string(b), true
}

// mergeBase64 adds to hits, the plain scan's, the credentials found
// wrapped in base64: one overlapping a plain hit replaces it only when
// that hit is of the general kind (the run read as a random value), so a
// JSON Web Token, whose parts are base64 too, stays one.
func mergeBase64(hits, wrapped []secretHit) []secretHit {
	for _, b := range wrapped {
		replaced, overlaps := false, false
		for i, h := range hits {
			if h.start < b.end && b.start < h.end {
				overlaps = true
				if h.kind == genericKind && !replaced {
					hits[i], replaced = b, true
				}
			}
		}
		if !overlaps {
			hits = append(hits, b)
		}
	}
	return hits
}
