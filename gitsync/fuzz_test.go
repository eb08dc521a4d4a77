package gitsync

import (
	"testing"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/gitsync/derive"

	"github.com/acolyte-dev/acolyte/gitsync/format"
)

// FuzzParseSeeds: any accepted seeds file gives valid, distinct memories of
// valid UTF-8 that the memories file can hold.
func FuzzParseSeeds(f *testing.F) {
	for _, s := range []string{
		`[]`,
		`["The CLI is built with urfave/cli."]`,
		`["a fact", {"content": "another fact", "topic": "build"}]`,
		`[{"content": "x y", "topic": "a\u0000b"}]`,
		"[\"caf\xe9\"]",
		`["same fact", "SAME   fact"]`,
		`[1, null, true, [], {}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		seeds, err := derive.ParseSeeds("seeds.json", data)
		if err != nil {
			return
		}
		if !utf8.Valid(data) {
			t.Fatal("accepted invalid UTF-8")
		}
		seen := map[string]bool{}
		for _, m := range seeds {
			if err := format.CheckMemory(m); err != nil {
				t.Fatalf("seed the file cannot hold: %v", err)
			}
			if seen[m.ID] {
				t.Fatalf("two seeds share id %s", m.ID)
			}
			seen[m.ID] = true
		}
	})
}
