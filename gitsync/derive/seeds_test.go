package derive

import (
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory"
)

func TestParseSeedsAcceptsStringsAndObjects(t *testing.T) {
	seeds, err := ParseSeeds("seeds.json", []byte(`[
  "The API server listens on port 8080.",
  {"content": "Deploys go through the release branch.", "topic": "release"}
]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(seeds) != 2 {
		t.Fatalf("got %d seeds", len(seeds))
	}
	if s := seeds[1]; s.Content != "Deploys go through the release branch." || s.Topic != "release" ||
		s.Kind != memory.KindSeed || s.Source != "seeds.json" || s.Scope != memory.ScopeProject || !strings.HasPrefix(s.ID, "s-") {
		t.Errorf("seed = %+v", s)
	}
	again, _ := ParseSeeds("other.json", []byte(`["the api server  listens on port 8080."]`))
	if again[0].ID != seeds[0].ID {
		t.Error("the same fact got a different id from another file")
	}
}

func TestParseSeedsErrorsGivePositions(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"not an array", `{"content": "x"}`, `seeds.json:1:1: a seeds file is a JSON array`},
		{"number element", "[\n  \"fine seed\",\n  42\n]", "seeds.json:3:3: seed 2: is a number"},
		{"object without content", "[\n  {\"topic\": \"x\"}]", `seeds.json:2:3: seed 1: the object has no "content"`},
		{"unknown field", `[{"content": "a fact here", "kind": "rule"}]`, `unknown field "kind"`},
		{"content not a string", `[{"content": 5}]`, `"content" must be a string`},
		{"empty content", `["fine seed", "   "]`, "seeds.json:1:15: seed 2: memory is empty"},
		{"multi-line topic", `[{"content": "a fact here", "topic": "a\nb"}]`, "topic must be a single line"},
		{"duplicate", `["Same fact.", "same  FACT."]`, "seeds.json:1:16: seed 2: says the same as seed at seeds.json:1:2"},
		{"truncated", `["a fact here",`, "ends too early"},
		{"malformed", `["a fact here" "b"]`, "malformed JSON"},
		{"trailing data", `["a fact here"] []`, "unexpected data after the array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSeeds("seeds.json", []byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
