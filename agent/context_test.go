package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
)

func TestCapResultKeepsValidUTF8JSONUnderTheCap(t *testing.T) {
	big, _ := json.Marshal(map[string]string{"content": strings.Repeat("é\"€x", 1<<20)})
	out := capResult(toolbox.Tool{}, big, 4096)
	if len(out) > 4096 || !json.Valid(out) || !utf8.Valid(out) {
		t.Fatalf("capped to %d bytes, valid JSON %v, valid UTF-8 %v", len(out), json.Valid(out), utf8.Valid(out))
	}
	// The content keeps its head and its tail, and says it was cut.
	var v struct {
		Content string `json:"content"`
		Shrunk  string `json:"shrunk"`
	}
	if err := json.Unmarshal(out, &v); err != nil || !strings.HasPrefix(v.Content, "é\"€x") || !strings.HasSuffix(v.Content, "é\"€x") || !strings.Contains(v.Shrunk, "content lost") {
		t.Fatalf("capped result %.300s (%v)", out, err)
	}
	small := json.RawMessage(`{"ok":true}`)
	if got := capResult(toolbox.Tool{}, small, 4096); string(got) != string(small) {
		t.Fatalf("a small result changed: %s", got)
	}
}

func FuzzCapResult(f *testing.F) {
	f.Add(`{"content":"hello"}`, 16)
	f.Add(`{"content":"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\""}`, 20)
	f.Add(`{"a":"éééééééééééééééééééééé€€€€€€€"}`, 40)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if !json.Valid([]byte(s)) || max < 256 || max > 1<<20 {
			t.Skip()
		}
		raw, _ := json.Marshal(json.RawMessage(s)) // compact, as tool results are
		out := capResult(toolbox.Tool{}, raw, max)
		// A run of invalid bytes becomes one U+FFFD first, which may
		// bring the result under the cap: only what is over it after
		// that must be cut to an object that says so.
		over := len(strings.ToValidUTF8(string(raw), "\uFFFD")) > max
		if len(out) > max || !json.Valid(out) || !utf8.Valid(out) || over && out[0] != '{' {
			t.Fatalf("cap %d: %d bytes, valid JSON %v, valid UTF-8 %v: %q", max, len(out), json.Valid(out), utf8.Valid(out), out)
		}
	})
}
