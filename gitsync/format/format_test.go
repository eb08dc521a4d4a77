package format

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/memory"
)

func stored(id, content string, updated time.Time) memory.Memory {
	return memory.Memory{
		ID: id, Scope: memory.ScopeProject, Kind: memory.KindStored, Content: content,
		Source: "cli", CreatedAt: updated, UpdatedAt: updated,
	}
}

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)

func edited(m memory.Memory, content string, at time.Time) memory.Memory {
	m.Content, m.UpdatedAt = content, at
	return m
}

const fileHead = `{"acolyte":"memories","version":1}` + "\n"

func line(m memory.Memory) string { return string(encodeRecord(m)) }

func TestEncodeIsCanonicalAndRoundTrips(t *testing.T) {
	mems := []memory.Memory{
		{ID: "01JZZZZZZZZZZZZZZZZZZZZZZZ", Scope: memory.ScopeProject, ScopeKey: "/home/me/repo", Kind: memory.KindObservation,
			Content: "tests need <TMPDIR> & a \"quoted\" path", Topic: "testing", Source: "distill",
			CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), Commit: "abc123", Paths: []string{"cmd/app.go", "a.go", "a.go"}, Tokens: 9},
		stored("01JAAAAAAAAAAAAAAAAAAAAAAA", "use gofmt", t0),
	}
	got := string(Encode(mems))
	want := `{"acolyte":"memories","version":1}
{"id":"01JAAAAAAAAAAAAAAAAAAAAAAA","kind":"stored","content":"use gofmt","source":"cli","created":"2025-03-01T12:00:00.123Z","updated":"2025-03-01T12:00:00.123Z"}
{"id":"01JZZZZZZZZZZZZZZZZZZZZZZZ","kind":"observation","content":"tests need <TMPDIR> & a \"quoted\" path","topic":"testing","source":"distill","created":"2025-03-01T12:00:00.123Z","updated":"2025-03-01T13:00:00.123Z","commit":"abc123","paths":["a.go","cmd/app.go"]}
`
	if got != want {
		t.Fatalf("Encode:\n%s\nwant:\n%s", got, want)
	}
	decoded, err := Decode("memories.jsonl", []byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if len(decoded) != 2 || decoded[1].Content != mems[0].Content || decoded[1].Scope != memory.ScopeProject ||
		decoded[1].ScopeKey != "" || !decoded[1].UpdatedAt.Equal(t0.Add(time.Hour).Truncate(time.Millisecond)) {
		t.Fatalf("Decode gave %+v", decoded)
	}
	if string(Encode(decoded)) != got {
		t.Fatal("Encode(Decode(x)) != x for canonical x")
	}
	if !isCanonical([]byte(got)) {
		t.Fatal("IsCanonical rejected Encode output")
	}
}

func TestIsCanonicalRejectsEquivalentButDifferentBytes(t *testing.T) {
	canonical := string(Encode([]memory.Memory{stored("01B", "second", t0), stored("01A", "first", t0)}))
	lines := strings.Split(strings.TrimSuffix(canonical, "\n"), "\n")
	for name, data := range map[string]string{
		"unsorted":           lines[0] + "\n" + lines[2] + "\n" + lines[1] + "\n",
		"no trailing LF":     strings.TrimSuffix(canonical, "\n"),
		"CRLF":               strings.ReplaceAll(canonical, "\n", "\r\n"),
		"blank line":         canonical + "\n",
		"key order":          lines[0] + "\n" + `{"kind":"stored","id":"01A","content":"first","source":"cli","created":"2025-03-01T12:00:00.123Z","updated":"2025-03-01T12:00:00.123Z"}` + "\n" + lines[2] + "\n",
		"second precision":   strings.ReplaceAll(canonical, ".123Z", "Z"),
		"empty":              "",
		"html escaped":       lines[0] + "\n" + `{"id":"01A","kind":"stored","content":"a \u003c b"}` + "\n",
		"empty optional key": lines[0] + "\n" + `{"id":"01A","kind":"stored","content":"first","topic":""}` + "\n",
	} {
		if isCanonical([]byte(data)) {
			t.Errorf("%s: IsCanonical = true", name)
		}
	}
	if !isCanonical([]byte(canonical)) {
		t.Error("canonical data rejected")
	}
}

func TestDecodeErrorsNameFileAndLine(t *testing.T) {
	head := `{"acolyte":"memories","version":1}` + "\n"
	good := `{"id":"01A","kind":"stored","content":"first"}` + "\n"
	tests := []struct {
		name, data string
		line       int
		is         error
		mention    string
	}{
		{"malformed JSON", head + good + `{"id":"01B","kind":"stored",` + "\n", 3, ErrInvalidFile, "malformed JSON"},
		{"newer version", `{"acolyte":"memories","version":2}` + "\n" + good, 1, ErrVersionTooNew, "upgrade acolyte"},
		{"missing header", good, 1, ErrInvalidFile, "header"},
		{"empty content", head + `{"id":"01A","kind":"stored","content":"  "}` + "\n", 2, memory.ErrEmpty, "01A"},
		{"unknown kind", head + `{"id":"01A","kind":"fact","content":"x y"}` + "\n", 2, memory.ErrUnknownKind, "stored"},
		{"unknown field", head + `{"id":"01A","kind":"stored","content":"x y","scope":"user"}` + "\n", 2, ErrInvalidFile, "scope"},
		{"bad time", head + `{"id":"01A","kind":"stored","content":"x y","created":"yesterday"}` + "\n", 2, ErrInvalidFile, "RFC 3339"},
		{"bad id", head + `{"id":"a b","kind":"stored","content":"x y"}` + "\n", 2, ErrInvalidFile, "letters"},
		{"conflict", head + "<<<<<<< HEAD\n" + good + "=======\n>>>>>>> other\n", 2, ErrConflictMarkers, "git checkout --theirs"},
		{"diff3 conflict", head + "<<<<<<< HEAD\n" + good + "||||||| base\n=======\n>>>>>>> other\n", 2, ErrConflictMarkers, "acolyte hooks install"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(".acolyte/memories.jsonl", []byte(tt.data))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line != tt.line {
				t.Errorf("error %v: want line %d", err, tt.line)
			}
			if !strings.HasPrefix(err.Error(), ".acolyte/memories.jsonl:") || !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q: want file name and %q", err, tt.mention)
			}
		})
	}
}

func TestWriteFileReplacesAtomicallyAndLeavesNoTempFiles(t *testing.T) {
	root := t.TempDir()
	path := MemoriesPath(root)
	first := []memory.Memory{stored("01A", "first fact", t0)}
	if err := WriteFile(path, first); err != nil {
		t.Fatal(err)
	}
	second := append(first, stored("01B", "second fact", t0))
	if err := WriteFile(path, second); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil || len(got) != 2 {
		t.Fatalf("ReadFile = %v, %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if e.Name() != MemoriesFile {
			t.Errorf("left behind %s", e.Name())
		}
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", info.Mode().Perm())
	}
	if mems, err := ReadFile(filepath.Join(root, "nope.jsonl")); err != nil || mems != nil {
		t.Errorf("missing file: %v, %v", mems, err)
	}
}

// isCanonical reports whether data is a valid memories file exactly as
// Encode would write it.
func isCanonical(data []byte) bool {
	mems, err := Decode("", data)
	return err == nil && bytes.Equal(data, Encode(mems))
}

// TestGlobsRoundTrip: a memory's globs are written last, sorted and each
// once, read back as they were, and held to memory's limits like every
// other field; a file whose memories carry none has no globs key at all,
// so files written before globs existed stay canonical byte for byte.
func TestGlobsRoundTrip(t *testing.T) {
	before := fileHead + `{"id":"01A","kind":"rule","content":"use gofmt","source":"AGENTS.md","paths":["a.go"]}` + "\n"
	old, err := Decode(MemoriesFile, []byte(before))
	if err != nil || !isCanonical([]byte(before)) || string(Encode(old)) != before {
		t.Fatalf("a file without globs must stay canonical: %v\n%s", err, Encode(old))
	}
	m := old[0]
	m.Globs = []string{"migrations/**", "*.sql", "migrations/**"}
	got := string(Encode([]memory.Memory{m}))
	want := fileHead + `{"id":"01A","kind":"rule","content":"use gofmt","source":"AGENTS.md","paths":["a.go"],"globs":["*.sql","migrations/**"]}` + "\n"
	if got != want {
		t.Fatalf("Encode:\n%s\nwant:\n%s", got, want)
	}
	back, err := Decode(MemoriesFile, []byte(got))
	if err != nil || len(back) != 1 || strings.Join(back[0].Globs, " ") != "*.sql migrations/**" || !isCanonical([]byte(got)) {
		t.Fatalf("Decode gave %+v (%v)", back, err)
	}
	for name, globs := range map[string]string{
		"bad pattern": `["src/[a-"]`,
		"too long":    `["` + strings.Repeat("a", memory.MaxGlobBytes+1) + `"]`,
		"empty":       `[" "]`,
		"control":     `["a\u001b[2Jb"]`,
	} {
		line := `{"id":"01B","kind":"rule","content":"x","globs":` + globs + `}`
		d, err := DecodeAll(MemoriesFile, []byte(fileHead+line+"\n"))
		if err != nil || len(d.Invalid) != 1 || !errors.Is(d.Invalid[0], memory.ErrInvalidGlob) || d.InvalidLines[0] != line {
			t.Errorf("%s: a line with globs %s: %+v (%v), want it kept aside as invalid", name, globs, d, err)
		}
	}
	// A writer refuses what the reader would.
	bad := memory.Memory{ID: "01B", Kind: memory.KindRule, Content: "x", Globs: []string{"src/[a-"}}
	if err := CheckMemory(bad); !errors.Is(err, memory.ErrInvalidGlob) {
		t.Errorf("CheckMemory of a bad glob: %v", err)
	}
}
