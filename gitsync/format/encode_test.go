package format

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

// jsonLine is the reference encoding appendMemory must equal.
func jsonLine(m memory.Memory) []byte { return encodeLine(toRecord(m)) }

func TestAppendMemoryMatchesJSON(t *testing.T) {
	odd := "ctl \x00\x01\b\f\n\r\t\x1b[31m\x7f \"q\" \\ <&> é \u2028\u2029 \xff\xfe bad utf-8 \U0001F600"
	zone := time.FixedZone("x", 3600)
	for _, m := range []memory.Memory{
		{ID: "01A", Kind: "stored", Content: "plain"},
		{ID: "01A", Kind: "stored", Content: odd, Topic: odd, Source: odd, CreatedAt: t0, UpdatedAt: t0.In(zone), Commit: odd, Paths: []string{odd, "a.go"}, Globs: []string{odd, "*.tsx"}},
		{ID: odd, Kind: memory.Kind(odd), Content: "", Paths: []string{"b", "a", "b"}, Globs: []string{" b/** ", "a", "b/**", ""}},
		{ID: "01A", Kind: "rule", Content: "x", Globs: []string{}},
		{ID: "01A", Kind: "rule", Content: "x", Paths: []string{}, UpdatedAt: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "01A", Kind: "rule", Content: "x", CreatedAt: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), UpdatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "01A", Kind: "rule", Content: "x", CreatedAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), UpdatedAt: time.Date(2025, 1, 1, 0, 30, 0, 0, time.FixedZone("y", 3600))},
	} {
		if got, want := appendMemory(nil, m), jsonLine(m); !bytes.Equal(got, want) {
			t.Errorf("appendMemory:\n got %q\nwant %q", got, want)
		}
	}
}

func FuzzAppendMemory(f *testing.F) {
	f.Add("01A", "stored", "fact", "topic", "cli", "abc", "a.go", "migrations/**", int64(0))
	f.Add("\x00", "\xff", "\u2028\x1b]52;c;aGk=\x07", "", "", "", "", " \xff ", int64(-62135596800123))
	f.Fuzz(func(t *testing.T, id, kind, content, topic, source, commit, path, glob string, ms int64) {
		m := memory.Memory{ID: id, Kind: memory.Kind(kind), Content: content, Topic: topic, Source: source, CreatedAt: t0, UpdatedAt: time.UnixMilli(ms), Commit: commit}
		if path != "" {
			m.Paths = []string{path, content}
		}
		if glob != "" {
			m.Globs = []string{glob, topic}
		}
		if got, want := appendMemory(nil, m), jsonLine(m); !bytes.Equal(got, want) {
			t.Fatalf("appendMemory:\n got %q\nwant %q", got, want)
		}
	})
}

// TestParseCanonicalAgreesWithJSON: every line the fast path reads, the
// strict decoder reads the same way; canonical lines take the fast path.
func TestParseCanonicalAgreesWithJSON(t *testing.T) {
	canon := string(appendMemory(nil, memory.Memory{ID: "01A", Kind: "stored", Content: "fact é <&>", Topic: "t", Source: "cli", CreatedAt: t0, UpdatedAt: t0, Commit: "abc", Paths: []string{"a.go", "b.go"}, Globs: []string{"*.tsx", "migrations/**"}}))
	if _, ok := parseCanonical(strings.TrimSuffix(canon, "\n")); !ok {
		t.Errorf("the canonical line %q does not take the fast path", canon)
	}
	for _, line := range []string{
		strings.TrimSuffix(canon, "\n"),
		`{"id":"01A","kind":"stored","content":"x"}`,
		`{"id":"01A","kind":"stored","content":"x","paths":[]}`,
		`{"id":"01A","kind":"stored","content":"x","globs":[]}`,
		`{"id":"01A","kind":"stored","content":"x","globs":["a","b"],"paths":["c"]}`,
		`{"id":"01A","kind":"stored","content":"x","paths":["c"],"globs":["b","a"]}`,
		`{"id":"01A","kind":"stored","content":"x","topic":""}`,
		`{"id":"01A","kind":"stored","content":"a\"b"}`,
		`{"id":"01A","kind":"stored","content":"x"} `,
		`{"id":"01A","kind":"stored","content":"x","extra":"y"}`,
		`{"id":"01A","kind":"stored","content":"x","id":"01B"}`,
		`{"id":"01A","kind":"stored","content":"` + "\xff" + `"}`,
		`{"id":"01A","kind":"stored","content":"` + "\x1b" + `"}`,
		`{"ID":"01A","kind":"stored","content":"x"}`,
	} {
		checkParseCanonical(t, line)
	}
}

func checkParseCanonical(t *testing.T, line string) {
	t.Helper()
	fast, ok := parseCanonical(line)
	if !ok {
		return
	}
	strict, err := decodeJSON(line)
	if err != nil {
		t.Fatalf("the fast path read %q, which the strict decoder refuses: %v", line, err)
	}
	if !reflect.DeepEqual(fast, strict) {
		t.Fatalf("%q:\nfast   %#v\nstrict %#v", line, fast, strict)
	}
}

func FuzzParseCanonical(f *testing.F) {
	f.Add(`{"id":"01A","kind":"stored","content":"x","paths":["a","b"]}`)
	f.Add(`{"id":"01A","kind":"stored","content":"x","topic":"t","source":"s","created":"c","updated":"u","commit":"c"}`)
	f.Fuzz(func(t *testing.T, line string) { checkParseCanonical(t, line) })
}
