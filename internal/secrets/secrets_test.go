package secrets

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/secrets/secretstest"
)

// The tables are shared with gitsync's test of every road into .acolyte/.
var (
	secretCases   = secretstest.Credentials
	harmlessCases = secretstest.Lookalikes
)

func TestDetect(t *testing.T) {
	missed := 0
	for _, c := range secretCases {
		what, found := Detect(c.Content)
		if !found {
			missed++
			t.Errorf("Detect missed %s in %q", c.Kind, c.Content)
		} else if what != c.Kind {
			t.Errorf("Detect(%q) = %q, want %q", c.Content, what, c.Kind)
		}
	}
	refused := 0
	for _, h := range harmlessCases {
		if what, found := Detect(h); found {
			refused++
			t.Errorf("Detect(%q) refused it as %s", h, what)
		}
	}
	kinds := map[string]bool{}
	for _, c := range secretCases {
		kinds[c.Kind] = true
	}
	t.Logf("%d of %d credentials (%d kinds) detected; %d of %d look-alikes refused",
		len(secretCases)-missed, len(secretCases), len(kinds), refused, len(harmlessCases))
	if len(secretCases) < 40 || len(harmlessCases) < 30 {
		t.Fatalf("the tables shrank to %d credentials and %d look-alikes", len(secretCases), len(harmlessCases))
	}
}

// Find locates every credential by line and offset, once each, in
// order.
func TestFind(t *testing.T) {
	text := "# deploy notes\n" +
		"the aws secret is sFtDyvikDrPe6wmMvQGY7nU4dINx2eZRwN/ptWPY\n" +
		"nothing here; rotate the token every 90 days\n" +
		"\n" +
		"db: postgres://admin:s3cr3tPass@db.internal:5432/app and gh" + "p_kJGcW3ALRUn542ysZySZeuFiEXpVdE58zHYp\n" +
		"https://ci-bot:gh" + "p_kJGcW3ALRUn542ysZySZeuFiEXpVdE58zHYp@github.com/acme/app.git"
	got := Find(text)
	want := []Finding{
		{Kind: "an AWS secret access key", Line: 2, Offset: strings.Index(text, "sFtDy")},
		{Kind: "a password in a URL", Line: 5, Offset: strings.Index(text, "postgres://")},
		{Kind: "a GitHub token", Line: 5, Offset: strings.Index(text, "gh"+"p_")},
		{Kind: "a GitHub token", Line: 6, Offset: strings.LastIndex(text, "gh"+"p_")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Find:\n got %+v\nwant %+v", got, want)
	}
	if got := Find("rotate the token every 90 days\n"); got != nil {
		t.Fatalf("Find of harmless text = %+v", got)
	}
	for _, c := range secretCases {
		fs := Find(c.Content)
		if len(fs) == 0 {
			t.Errorf("Find(%q) found nothing", c.Content)
			continue
		}
		for _, f := range fs {
			if wantLine := 1 + strings.Count(c.Content[:f.Offset], "\n"); f.Line != wantLine {
				t.Errorf("Find(%q): %s at offset %d on line %d, want line %d", c.Content, f.Kind, f.Offset, f.Line, wantLine)
			}
		}
	}
}

// A finding must never carry the secret, so that no caller can print it:
// its fields are a kind, a line and an offset, and nothing else.
func TestFindingHoldsNoText(t *testing.T) {
	typ := reflect.TypeFor[Finding]()
	var fields []string
	for i := range typ.NumField() {
		fields = append(fields, typ.Field(i).Name+" "+typ.Field(i).Type.String())
	}
	if want := []string{"Kind string", "Line int", "Offset int"}; !reflect.DeepEqual(fields, want) {
		t.Fatalf("Finding has fields %v, want %v: a new field must not expose the matched text", fields, want)
	}
	for _, c := range secretCases {
		for _, f := range Find(c.Content) {
			if f.Kind != c.Kind && strings.Contains(c.Content, f.Kind) {
				t.Errorf("kind %q repeats part of the text", f.Kind)
			}
		}
	}
}

func FuzzDetect(f *testing.F) {
	for _, c := range secretCases {
		f.Add(c.Content)
	}
	for _, h := range harmlessCases {
		f.Add(h)
	}
	f.Add("password: \"unterminated\npassword=\n:=\n\"key\":\"\"\nhttps://:@\n-----BEGIN")
	f.Fuzz(func(t *testing.T, text string) {
		what, found := Detect(text)
		fs := Find(text)
		if found != (len(fs) > 0) {
			t.Fatalf("Detect found %v (%q) but Find %d findings", found, what, len(fs))
		}
		lines := strings.Count(text, "\n") + 1
		kindSeen := false
		for i, s := range fs {
			if s.Offset < 0 || s.Offset >= len(text) {
				t.Fatalf("finding %d at offset %d of %d bytes", i, s.Offset, len(text))
			}
			if s.Line < 1 || s.Line > lines {
				t.Fatalf("finding %d on line %d of %d", i, s.Line, lines)
			}
			if want := 1 + strings.Count(text[:s.Offset], "\n"); s.Line != want {
				t.Fatalf("finding %d at offset %d on line %d, want %d", i, s.Offset, s.Line, want)
			}
			if i > 0 && s.Offset <= fs[i-1].Offset {
				t.Fatalf("findings out of order: offset %d after %d", s.Offset, fs[i-1].Offset)
			}
			kindSeen = kindSeen || s.Kind == what
		}
		if found && !kindSeen {
			t.Fatalf("Detect named %q, which Find did not report", what)
		}
	})
}

// A rule from AGENTS.md, the size most project memories have.
const benchRule = "- Pass `context.Context` first, wrap errors with `%w`, and keep no package-level mutable state; " +
	"an error message says what was wrong and how to fix it, and never echoes the token or key it refused."

func BenchmarkDetectRule(b *testing.B) {
	b.SetBytes(int64(len(benchRule)))
	for b.Loop() {
		if _, found := Detect(benchRule); found {
			b.Fatal("the rule was refused")
		}
	}
}

// benchMemory is 8 KiB of this repository's own contributing guide: prose
// and commands that talk about keys, tokens and passwords without holding
// one, so every rule scans it to the end.
func benchMemory(b *testing.B) string {
	data, err := os.ReadFile("../../CONTRIBUTING.md")
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat(string(data)+"\nset PASSWORD in the environment; the API key is read from GEMINI_API_KEY\n", 8192/len(data)+1)
	text = text[:8192]
	if what, found := Detect(text); found {
		b.Fatalf("the benchmark text holds %s", what)
	}
	return text
}

func BenchmarkDetect8KiB(b *testing.B) {
	text := benchMemory(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Detect(text)
	}
}

func BenchmarkFind8KiB(b *testing.B) {
	text := benchMemory(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Find(text)
	}
}

// TestUnseen measures the detector alone against the held-out table; the
// roads are measured by gitsync's TestUnseenCredentialsOnEveryRoad.
func TestUnseen(t *testing.T) {
	measure(t, "unseen", secretstest.Unseen, secretstest.UnseenLookalikes)
}

// measure fails unless 95% of creds are detected and at most one of
// lookalikes refused, and logs every miss.
func measure(t *testing.T, name string, creds []secretstest.Case, lookalikes []string) {
	t.Helper()
	missed, refused := 0, 0
	for _, c := range creds {
		if _, found := Detect(c.Content); !found {
			missed++
			t.Logf("missed %s: %q", c.Kind, c.Content)
		}
	}
	for _, h := range lookalikes {
		if what, found := Detect(h); found {
			refused++
			t.Logf("refused the harmless %q as %s", h, what)
		}
	}
	n := len(creds)
	t.Logf("%s: %d of %d credentials detected, %d of %d look-alikes refused", name, n-missed, n, refused, len(lookalikes))
	if float64(n-missed) < 0.95*float64(n) || refused > 1 {
		t.Errorf("the detector falls short of 95%% detected and at most 1 look-alike refused")
	}
}

// A token split by what a reader does not see, or by markdown, is still
// found, at its place in the text as written.
func TestFindNormalized(t *testing.T) {
	tok := "gl" + "pat-" + "Qm7RzX2vKp9LwT4nB8cY"
	for _, split := range []string{"\u200b", "\u00ad", "\u2060", "\ufeff", "`", "``", "\n", "\r\n  ", "`\u200c`"} {
		text := "notes\nthe CI uses `" + tok[:12] + split + tok[12:] + "` for pushes"
		got := Find(text)
		want := []Finding{{Kind: "a GitLab token", Line: 2, Offset: strings.Index(text, "gl"+"pat-")}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("split by %q: Find = %+v, want %+v", split, got, want)
		}
	}
	// Prose wraps words, not tokens: short runs are never joined.
	if got := Find("the password is\nhashed with argon2id before it is stored"); got != nil {
		t.Errorf("wrapped prose: %+v", got)
	}
}

// Every word for a password is found as a setting's name, so that the
// rule's keywords, chosen for speed, still reach each one.
func TestPasswordWordsAreFound(t *testing.T) {
	for _, w := range passwordWords {
		for _, text := range []string{w + "=Xq7vL2zR9k!", "db_" + w + ": Xq7vL2zR9k!", w + " = 'Xq7vL2zR9k!'"} {
			if what, found := Detect(text); !found || what != "a password" {
				t.Errorf("Detect(%q) = %q, %v; want a password", text, what, found)
			}
		}
	}
}

// TestFresh measures the detector alone against the second held-out table.
func TestFresh(t *testing.T) {
	measure(t, "fresh", secretstest.Fresh, secretstest.FreshLookalikes)
}

// FuzzCommandPasswordFlags holds each command-password regexp to the flags
// findCommandPassword looks for before running it: every match holds one,
// so skipping a line that holds none skips nothing the regexp would find.
func FuzzCommandPasswordFlags(f *testing.F) {
	for _, c := range append(append(secretstest.Credentials, secretstest.Unseen...), secretstest.Fresh...) {
		f.Add(c.Content)
	}
	for _, s := range []string{"mysql -pS3cret db", "docker login -u me -p s3cr3tPass registry", "podman login --password=x9Yq2 reg",
		"redis-cli -a hunter22 ping", "redis-cli --pass hunter22", "run it with --password  p4ssw0rd", "curl --user a:b https://x",
		"sshpass -p'abc' ssh", "curl -ua:b x", "mysql\t-px db", "the cli login after a failed login"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for i, c := range commandPasswords {
			for _, m := range c.re().FindAllStringIndex(line, -1) {
				match := line[m[0]:m[1]]
				if !slices.ContainsFunc(c.flag, func(flag string) bool { return strings.Contains(match, flag) }) {
					t.Errorf("command password regexp %d matches %q, which holds none of %q", i, match, c.flag)
				}
			}
		}
	})
}
