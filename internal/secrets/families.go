package secrets

import (
	"regexp"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/internal/lazyre"
)

// familyRules are the credential families added after a held-out table
// (secretstest.Unseen) showed one in four credentials passing: vendor
// tokens with a prefix, key bodies without their armour, passwords on
// command lines, in .pgpass and .netrc lines, and in prose. They run after
// the issuer rules and before the general assignment rules.
func familyRules() []secretRule {
	return []secretRule{
		token("a Google OAuth token", `\bya29\.[0-9A-Za-z_.-]{30,}|\b1//0[0-9A-Za-z_-]{40,}`, "ya29.", "1//0"),
		token("a Firebase Cloud Messaging server key", `\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}`, "A91b"),
		token("a Mapbox secret token", `\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`, "sk.eyJ"),
		{kind: "an Alibaba Cloud AccessKey id", keywords: []string{"LTAI"},
			re: lazyre.New(`\bLTAI[A-Za-z0-9]{12,20}\b`),
			check: func(line string, m []int) bool {
				return mixedCase(line[m[0]:m[1]]) && !placeholderToken(line[m[0]:m[1]])
			}},
		// An AccessKey secret, like an AWS one, has no prefix: thirty
		// base62 characters count only where the line speaks of Alibaba.
		{kind: "an Alibaba Cloud AccessKey secret", keywords: []string{"libaba", "liyun", "accesskeysecret", "access_key_secret"},
			re:    lazyre.New(`(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9]{30})(?:$|[^A-Za-z0-9/+=])`),
			check: func(line string, m []int) bool { return mixedCase(line[m[2]:m[3]]) && !isPlaceholder(line[m[2]:m[3]]) },
			span:  1},
		// Okta API tokens are 00 and forty characters; alone that is too
		// common a shape, so the line must name Okta or its SSWS scheme.
		{kind: "an Okta API token", keywords: []string{"okta", "ssws"},
			re:    lazyre.New(`(?:^|[^A-Za-z0-9_-])(00[A-Za-z0-9_-]{40})(?:$|[^A-Za-z0-9_-])`),
			check: func(line string, m []int) bool { return mixedCase(line[m[2]:m[3]]) },
			span:  1},
		// Vault's older service, batch and recovery tokens (s., b., r.):
		// dotted, so the assignment rules took them for config paths.
		{kind: "a HashiCorp Vault token", keywords: []string{"ault"},
			re:    lazyre.New(`(?:^|[^A-Za-z0-9_.])([sbr]\.[A-Za-z0-9]{24,})\b`),
			check: func(line string, m []int) bool { return mixedCase(line[m[2]+2 : m[3]]) },
			span:  1},
		// Twilio auth tokens and Datadog keys are bare hex: only where the
		// line names the vendor, and only hex that mixes letters and digits.
		{kind: "a Twilio auth token", keywords: []string{"twilio"},
			re:    lazyre.New(`(?:^|[^A-Za-z0-9])([0-9a-f]{32})(?:$|[^A-Za-z0-9])`),
			check: func(line string, m []int) bool { return randomValue(line[m[2]:m[3]]) },
			span:  1},
		// An application key is forty hex digits, as a commit is: only where
		// the line speaks of an app key.
		{kind: "a Datadog API or application key", keywords: []string{"datadog", "dd_api", "dd_app", "dd-api", "dd-app"},
			re: lazyre.New(`(?:^|[^A-Za-z0-9])([0-9a-f]{40}|[0-9a-f]{32})(?:$|[^A-Za-z0-9])`),
			check: func(line string, m []int) bool {
				return randomValue(line[m[2]:m[3]]) && (m[3]-m[2] == 32 || strings.Contains(asciiLower(line), "app"))
			},
			span: 1},
		// A DER private key begins with the same few bytes whatever its
		// contents, so its base64 body is known by its start even without
		// the BEGIN line: PKCS#1 RSA and DSA, PKCS#8 RSA, EC and Ed25519,
		// SEC1 EC, encrypted PKCS#8 and OpenSSH. Public keys and
		// certificates begin differently.
		token("a private key", `(?:\bMII[A-Za-z0-9+/]{2}[AQgw]IBAAK[BC]|\bMII[A-Za-z0-9+/]{2}[AQgw]IBADANBgkqhkiG9w0BAQEFAAS|\bMIGHAgEAMBMGByqGSM49AgEG|\bMHcCAQEEI|\bMIGkAgEBBD|\bMC4CAQAwBQYDK2VwBCIEI|\bMII[A-Za-z0-9+/]{2}[A-Za-z0-9+/]{3,12}BgkqhkiG9w0BBQ0w|\bb3BlbnNzaC1rZXktdjEA)[A-Za-z0-9+/]{16}`,
			"IBAAK", "IBADAN", "GByqGSM49", "HcCAQEEI", "AgEBBD", "K2VwBCIEI", "qhkiG9w0BBQ0w", "b3BlbnNzaC1rZXktdjE"),
		{kind: "a password on a command line", keywords: []string{"mysql", "iadb", "curl", "hpass", "ogin", "s-cli", "--password"},
			find: findCommandPassword},
		// host:port:database:user:password, as libpq reads ~/.pgpass.
		{kind: "a .pgpass password", keywords: []string{":5432:", ":5433:", ":6432:", ":25060:", ":*:"},
			re: lazyre.New(`^\s*([A-Za-z0-9*][A-Za-z0-9.*_-]*):(\d{1,5}|\*):([^:\s]+):([^:\s]+):(\S+)\s*$`),
			check: func(line string, m []int) bool {
				return pgpassPassword(line[m[2]:m[3]], line[m[8]:m[9]], line[m[10]:m[11]])
			}},
		{kind: "a .netrc password", keywords: []string{"password"},
			re: lazyre.New(`(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)|^\s*password\s+(\S+)\s*$`),
			check: func(line string, m []int) bool {
				if m[2] >= 0 {
					return commandValue(line[m[2]:m[3]])
				}
				return strongValue(line[m[4]:m[5]])
			}},
		{kind: "a password", keywords: []string{"password", "passwd", "passphrase", "passwort", "pw ", "pwd ", "seña", "sena", "passe", "senha", "kennwort", "twoord", "sło", "slo"},
			find: findProse(prosePasswordNames, 4, func(v string) bool { return strongValue(v) || isUUID(v) })},
		// "the redis AUTH string is X", "the staging token was X": a longer
		// value than a password needs, since these words are everywhere.
		{kind: "a secret key or token", keywords: []string{"token", "secret", "auth", "api key", "access key"},
			find: findProse(proseSecretNames, 3, func(v string) bool { return len(v) >= 10 && strongValue(v) && !isHostPort(v) })},
	}
}

// isHostPort says v is an address, host:port ("--no-token on
// localhost.:8765"), not a token: a lower-case host name with a dot or
// named localhost, and a port of digits.
func isHostPort(v string) bool {
	host, port, ok := strings.Cut(strings.ReplaceAll(v, `\`, ""), ":")
	if !ok || port == "" || len(port) > 5 || !isNumber(port) || host == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return strings.Contains(host, ".") || host == "localhost"
}

// commandPassword finds a password given as a command's argument: re has
// one group, the password (the first that matched, for alternatives).
type commandPassword struct {
	// flag holds the literals, one of which is in every match of re (the
	// flag that precedes the password). The rule's keywords are common in
	// prose ("after a failed login"), where the flag almost never is, and
	// a backtracking regexp over such a line cost more than the rest of
	// the scan of a large memories file.
	flag []string
	re   func() *regexp.Regexp
}

var commandPasswords = []commandPassword{
	// mysql -pSECRET: glued, since -p alone prompts.
	{[]string{"-p"}, lazyre.New(`\b(?:mysql|mysqldump|mysqladmin|mariadb|mysqlsh)\b[^\n]*?\s-p([^\s'"-][^\s'"]*)`)},
	{[]string{"-u"}, lazyre.New(`\bcurl\b[^\n]*?\s(?:-u|--user)\s*['"]?[^\s:'"]+:([^\s'"@]+)`)},
	{[]string{"-p"}, lazyre.New(`\bsshpass\b[^\n]*?\s-p\s*(?:'([^']+)'|"([^"]+)"|(\S+))`)},
	{[]string{"-p"}, lazyre.New(`\b(?:docker|podman|nerdctl|helm|buildah|skopeo|oras|crane|cf|oc|az\s+acr)\b[^\n]*?\blogin\b[^\n]*?\s(?:-p|--password)(?:\s+|=)(?:'([^']+)'|"([^"]+)"|(\S+))`)},
	{[]string{"-a", "-p"}, lazyre.New(`\bredis-cli\b[^\n]*?\s(?:-a|--pass)\s+(?:'([^']+)'|"([^"]+)"|(\S+))`)},
	{[]string{"--password"}, lazyre.New(`\s--password\s+(?:'([^']+)'|"([^"]+)"|([^\s-]\S*))`)},
}

func findCommandPassword(line string, hit func(start, end int)) {
	for _, c := range commandPasswords {
		if !slices.ContainsFunc(c.flag, func(f string) bool { return strings.Contains(line, f) }) {
			continue
		}
		for _, m := range c.re().FindAllStringSubmatchIndex(line, -1) {
			for g := 2; g+1 < len(m); g += 2 {
				if m[g] >= 0 && commandValue(line[m[g]:m[g+1]]) {
					hit(m[g], m[g+1])
					break
				}
			}
		}
	}
}

// commandValue accepts a password given on a command line or in a
// credentials file: anything but a variable, a template, a placeholder,
// another flag or a file.
func commandValue(v string) bool {
	v = strings.TrimRight(v, ".,;)")
	return len(v) >= 4 && !isPlaceholder(v) && !isReference(v) && v[0] != '-' && v[0] != '/' && v[0] != '@' &&
		!strings.HasPrefix(v, "file:") && !strings.HasPrefix(v, "env:")
}

// pgpassPassword accepts a .pgpass line's password unless the line is a
// time or a list of numbers, or a local default (postgres:postgres).
func pgpassPassword(host, user, pass string) bool {
	if isNumber(host) || isNumber(user) || isNumber(pass) || !commandValue(pass) {
		return false
	}
	return !(pass == user && (host == "localhost" || strings.HasPrefix(host, "127.") || host == "*"))
}

// proseVerbs join a secret's name to its value in a sentence, in the
// languages of passwordWords, longest first so that "is set to" is not
// read as "is".
var proseVerbs = []string{"is set to", "is now", "set to", "is nu", "était", "lautet", "jest", "was", "are", "ist",
	"war", "era", "est", "is", "es", "je", "är", "er", "on", "é", "è"}

// prosePasswordNames start "the prod db password is X" and "the root
// password for the NAS was X", lower-cased.
var prosePasswordNames = []string{"password", "passwd", "passphrase", "passwort", "kennwort", "wachtwoord", "pwd", "pw",
	"senha", "heslo", "contraseña", "contrasena", "mot de passe", "hasło", "haslo"}

// proseSecretNames start the same sentences about a token or a key.
var proseSecretNames = []string{"token", "secret", "auth string", "auth", "api key", "access key"}

// findProse returns a finder for sentences that start with a word of
// names: up to maxWords words, a verb, and a value that passes valueOK.
// A hand parser, not a regexp: over a line of prose the regexp, case
// folded and backtracking, cost ten times the rest of the scan.
func findProse(names []string, maxWords int, valueOK func(string) bool) func(line string, hit func(start, end int)) {
	return func(line string, hit func(start, end int)) {
		lower := asciiLower(line)
		for _, name := range names {
			for from := 0; from < len(lower); {
				i := strings.Index(lower[from:], name)
				if i < 0 {
					break
				}
				i += from
				from = i + len(name)
				if i > 0 && identByte(lower[i-1]) && lower[i-1] != '.' && lower[i-1] != '-' {
					continue // inside a word: not this name
				}
				s, e, ok := proseValue(lower[from:], maxWords)
				if !ok {
					continue
				}
				v := strings.TrimRight(line[from+s:from+e], ".,;:!?)")
				if v != "" && valueOK(v) {
					hit(from+s, from+s+len(v))
				}
			}
		}
	}
}

// proseValue reads, after a name, up to maxWords plain words, a verb and
// the value, and returns where the value is in s.
func proseValue(s string, maxWords int) (start, end int, ok bool) {
	i := 0
	for w := 0; w <= maxWords; w++ {
		j := skipSpace(s, i)
		if j == i || j >= len(s) {
			return 0, 0, false
		}
		for _, verb := range proseVerbs {
			if v := j + len(verb); strings.HasPrefix(s[j:], verb) && v < len(s) && isSpace(s[v]) {
				return valueAt(s, skipSpace(s, v))
			}
		}
		k := j
		for k < len(s) && !isSpace(s[k]) {
			if c := s[k]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("_.@/-", c) >= 0) {
				return 0, 0, false // not a plain word: the sentence is not one of these
			}
			k++
		}
		i = k
	}
	return 0, 0, false
}

// valueAt is the value at s[i]: quoted, or up to the next space or quote.
func valueAt(s string, i int) (int, int, bool) {
	if i >= len(s) {
		return 0, 0, false
	}
	if q := s[i]; q == '"' || q == '\'' {
		e := strings.IndexAny(s[i+1:], string(q)+"\n")
		if e <= 0 || s[i+1+e] != q {
			return 0, 0, false
		}
		return i + 1, i + 1 + e, true
	}
	e := i
	for e < len(s) && !isSpace(s[e]) && s[e] != '"' && s[e] != '\'' {
		e++
	}
	return i, e, e > i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// isUUID recognises a UUID, which some services issue as a password or
// server token (Postmark, Heroku): only after a password's name.
func isUUID(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// strongValue accepts a value that only a generated or chosen password
// looks like, where prose puts words: letters and digits with mixed case
// or a symbol ("j59p#jomke57", "Summer2024x"), and no placeholder. Words,
// versions (v2.14.3), identifiers with digits (sha256-hashed) and
// variables are not.
func strongValue(v string) bool {
	if len(v) < 6 || isPlaceholder(v) || isReference(v) || strings.Contains(v, "://") || v[0] == '/' || strings.ContainsAny(v, "[]{}()<>") {
		return false
	}
	var upper, lower, digit, symbol int
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'A' <= c && c <= 'Z':
			upper++
		case 'a' <= c && c <= 'z':
			lower++
		case '0' <= c && c <= '9':
			digit++
		case c == '-' || c == '_' || c == '.':
		case c < 0x80:
			symbol++
		}
	}
	if upper+lower == 0 || digit == 0 {
		return false
	}
	if strings.HasPrefix(v, "v") && strings.Count(v, ".") >= 1 && upper == 0 && symbol == 0 {
		return false
	}
	return upper > 0 && lower > 0 || symbol > 0
}

// documentedExamples are credentials published in their issuers' own
// documentation as examples. They are public and guard nothing, and a
// note quoting the docs would otherwise be refused; any other value of
// the same shape is still a credential. Only examples known to be the
// issuer's own are listed; AWS's say EXAMPLE and are let through as
// placeholders already.
var documentedExamples = []string{
	"sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc",       // Stripe's API reference, in every example
	"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", // the signature of jwt.io's default token
}

// isDocumentedExample reports whether a match is, or holds, one of the
// published examples, in any case: a topic is lower-cased from its heading.
func isDocumentedExample(match string) bool {
	for _, ex := range documentedExamples {
		if strings.Contains(asciiLower(match), asciiLower(ex)) {
			return true
		}
	}
	return false
}
