package hooks

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestSetJSONStringsKeepsTheAuthorsBytes(t *testing.T) {
	set := [][2]string{{"pre-commit", "npm test && { acolyte hook pre-commit; }"}, {"post-merge", "acolyte hook post-merge"}}
	for _, tc := range []struct{ name, doc, want string }{
		{"two-space, npm's layout",
			"{\n  \"name\": \"app\",\n  \"simple-git-hooks\": {\n    \"pre-commit\": \"npm test\",\n    \"preserveUnused\": [\"x\"]\n  },\n  \"z\": {\"pre-commit\": \"other\"}\n}\n",
			"{\n  \"name\": \"app\",\n  \"simple-git-hooks\": {\n    \"pre-commit\": \"npm test && { acolyte hook pre-commit; }\",\n    \"preserveUnused\": [\"x\"],\n    \"post-merge\": \"acolyte hook post-merge\"\n  },\n  \"z\": {\"pre-commit\": \"other\"}\n}\n"},
		{"one line", `{"simple-git-hooks": {"pre-commit": "npm test"}}`,
			`{"simple-git-hooks": {"pre-commit": "npm test && { acolyte hook pre-commit; }", "post-merge": "acolyte hook post-merge"}}`},
		{"empty, multi-line", "{\n\t\"simple-git-hooks\": {\n\t}\n}",
			"{\n\t\"simple-git-hooks\": {\n\t  \"pre-commit\": \"npm test && { acolyte hook pre-commit; }\",\n\t  \"post-merge\": \"acolyte hook post-merge\"\n\t}\n}"},
	} {
		got, err := setJSONStrings([]byte(tc.doc), []string{"simple-git-hooks"}, set)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", tc.name, err, got, tc.want)
		}
	}
	got, err := setJSONStrings([]byte(`{"husky": {"hooks": {"pre-commit": "npm test"}}, "hooks": {}}`), []string{"husky", "hooks"}, set[1:])
	if err != nil || string(got) != `{"husky": {"hooks": {"pre-commit": "npm test", "post-merge": "acolyte hook post-merge"}}, "hooks": {}}` {
		t.Errorf("husky 4: %v %s", err, got)
	}
	if _, err := setJSONStrings([]byte(`{"name": "x"}`), []string{"simple-git-hooks"}, set); !errors.Is(err, errManual) {
		t.Errorf("no object: %v", err)
	}
}

func FuzzSetJSONStrings(f *testing.F) {
	f.Add(`{"simple-git-hooks": {"pre-commit": "a", "b": [1, {"c": "d"}]}}`)
	f.Add("{\n  \"simple-git-hooks\": {}\n}")
	f.Fuzz(func(t *testing.T, doc string) {
		got, err := setJSONStrings([]byte(doc), []string{"simple-git-hooks"}, [][2]string{{"pre-commit", "x && y"}, {"post-merge", "z"}})
		if err != nil {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatalf("%q became invalid JSON %q: %v", doc, got, err)
		}
		hooks, _ := v["simple-git-hooks"].(map[string]any)
		if hooks["pre-commit"] != "x && y" || hooks["post-merge"] != "z" {
			t.Fatalf("%q became %q", doc, got)
		}
	})
}
