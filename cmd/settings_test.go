package cmd

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

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
