package cmd

import (
	"slices"
	"strings"
	"testing"
)

func TestInterspersed(t *testing.T) {
	app := newApp(strings.NewReader(""), &strings.Builder{}, &strings.Builder{})
	for _, tc := range []struct{ in, want string }{
		{"acolyte remember private note --scope user", "acolyte remember --scope user -- private note"},
		{"acolyte remember x --topic=y --json", "acolyte remember --topic=y --json -- x"},
		// A flag's value is taken whole, even when it starts with "-".
		{"acolyte remember x --topic -y", "acolyte remember --topic -y -- x"},
		// -- ends the flags; what follows is text.
		{"acolyte remember a -- --scope user", "acolyte remember -- a --scope user"},
		// "-" (stdin) and negative numbers are arguments.
		{"acolyte remember - --scope user", "acolyte remember --scope user -- -"},
		{"acolyte search offset -1 --limit 2", "acolyte search --limit 2 -- offset -1"},
		// Global flags before the command move after it.
		{"acolyte --home Y status --json", "acolyte status --home Y --json"},
		{"acolyte --repo D hooks install --json", "acolyte hooks install --repo D --json"},
		// An unknown flag moves too, for the parser to refuse by name.
		{"acolyte remember x --scpe user", "acolyte remember --scpe -- x user"},
		// Left alone: no command, an unknown command, root's own flags.
		{"acolyte --version", "acolyte --version"},
		{"acolyte --help search", "acolyte --help search"},
		{"acolyte serch x --json", "acolyte serch x --json"},
		{"acolyte hooks", "acolyte hooks"},
		{"acolyte merge-driver a -b c d", "acolyte merge-driver a -b c d"},
	} {
		got := interspersed(app, strings.Fields(tc.in))
		if want := strings.Fields(tc.want); !slices.Equal(got, want) {
			t.Errorf("interspersed(%s) = %q, want %q", tc.in, got, want)
		}
	}
}
