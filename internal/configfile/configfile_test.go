package configfile

import (
	"encoding/json"
	"errors"
	"maps"
	"regexp"
	"testing"
)

// FuzzParse holds Parse to encoding/json's own reading of a
// flat object of strings: it accepts exactly what json.Unmarshal accepts
// (with known keys), yields the same values, and every refusal names the
// file with a line and column inside it.
func FuzzParse(f *testing.F) {
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
	known := []string{"embedder", "embed-model", "embed-dim", "session", "team"}
	where := regexp.MustCompile(`^/h/config\.json:(\d+):(\d+): `)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Parse("/h/config.json", b, known, nil)
		// The oracle: an object whose every value is a JSON string (null is
		// not, though json.Unmarshal would read it as "") under a known key.
		var raw map[string]any
		wantErr := json.Unmarshal(b, &raw)
		if wantErr == nil && raw == nil {
			wantErr = errRefused // JSON null is no object
		}
		want := map[string]string{}
		if wantErr == nil {
			for k, v := range raw {
				s, ok := v.(string)
				if !ok || !containsString(known, k) {
					wantErr = errRefused
				}
				want[k] = s
			}
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: Parse error %v, json.Unmarshal error %v", b, err, wantErr)
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

// errRefused stands for the oracle's refusal of a file Parse must refuse.
var errRefused = errors.New("refused")
