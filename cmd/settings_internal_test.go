package cmd

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"strings"
	"testing"
)

// FuzzParseSettings holds parseSettings to encoding/json's own reading of a
// flat object of strings: it accepts exactly what json.Unmarshal accepts
// (with known keys), yields the same values, and every refusal names the
// file with a line and column inside it.
func FuzzParseSettings(f *testing.F) {
	for _, s := range []string{
		`{"embedder": "static"}`,
		"{\n  \"embed-model\": \"x\",\n  \"embeder\": \"static\"\n}",
		`{"embedder": ["static"]}`,
		`{"embedder": "static"  "embed-dim": "8"}`,
		`["embedder"]`,
		`{}`, ``, `{`, `{"session": "a", "session": "b"}`, `{"embed-dim": 8}`, `{} {}`, `{"embedder": null}`,
	} {
		f.Add([]byte(s))
	}
	known := settingNames()
	where := regexp.MustCompile(`^/h/config\.json:(\d+):(\d+): `)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseSettings("/h/config.json", b, known)
		// The oracle: an object whose every value is a JSON string (null is
		// not, though json.Unmarshal would read it as "") under a known key.
		var raw map[string]any
		wantErr := json.Unmarshal(b, &raw)
		if wantErr == nil && raw == nil {
			wantErr = errNo // JSON null is no object
		}
		want := map[string]string{}
		if wantErr == nil {
			for k, v := range raw {
				s, ok := v.(string)
				if !ok || !containsString(known, k) {
					wantErr = errNo
				}
				want[k] = s
			}
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: parseSettings error %v, json.Unmarshal error %v", b, err, wantErr)
		}
		if err != nil {
			if !where.MatchString(err.Error()) {
				t.Fatalf("%q: the error does not say where: %v", b, err)
			}
			return
		}
		if !maps.Equal(got, want) {
			t.Fatalf("%q: got %v, json.Unmarshal %v", b, got, want)
		}
	})
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// README.md's settings table lists every key config.json takes, with its
// flag and variable, and no other: it is checked against the flags, so it
// cannot drift from them.
func TestSettingsTableMatchesREADME(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n### Settings\n")
	if !ok {
		t.Fatal("README.md has no Settings section")
	}
	table, _, _ = strings.Cut(table, "\n#")
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| `(--[a-z-]+)` \\| ([^|]*) \\|")
	documented := map[string]settingRow{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		documented[m[1]] = settingRow{m[1], m[2], strings.ReplaceAll(strings.TrimSpace(m[3]), "`", "")}
	}
	rows := settingRows()
	if len(rows) != len(settingNames()) {
		t.Errorf("config.json takes %v, but only %d of them are flags", settingNames(), len(rows))
	}
	for _, want := range rows {
		if got, ok := documented[want.key]; !ok || got != want {
			t.Errorf("README.md's settings table: %+v, want %+v", got, want)
		}
		delete(documented, want.key)
	}
	for key := range documented {
		t.Errorf("README.md's settings table lists %q, which config.json does not take", key)
	}
}
