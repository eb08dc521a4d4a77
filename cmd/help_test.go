package cmd_test

import (
	"context"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/cmd"
)

// Global flags are listed once, in acolyte --help, and every command's help
// names them in one line; no flag prints its default twice.
func TestHelpListsGlobalFlagsOnce(t *testing.T) {
	help := func(args ...string) string {
		var out, errOut strings.Builder
		if code := cmd.Run(context.Background(), append(append([]string{"acolyte"}, args...), "--help"), strings.NewReader(""), &out, &errOut); code != cmd.ExitOK {
			t.Fatalf("acolyte %s --help: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}
	globals := []string{"--home", "--session", "--team-db", "--team", "--repo", "--embedder", "--embed-model", "--embed-url", "--embed-dim"}
	root := help()
	for _, g := range globals {
		if n := strings.Count(root, "   "+g+" "); n != 1 {
			t.Errorf("acolyte --help lists %s %d times, want once", g, n)
		}
	}
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(append([]string{}, path...), c.Name)
			text := help(p...)
			name := strings.Join(p, " ")
			for _, line := range strings.Split(text, "\n") {
				if strings.Count(line, "(default") > 1 {
					t.Errorf("acolyte %s --help prints a default twice: %s", name, strings.TrimSpace(line))
				}
				if strings.HasPrefix(strings.TrimSpace(line), "--home ") {
					t.Errorf("acolyte %s --help lists the global flags again: %s", name, strings.TrimSpace(line))
				}
				if strings.Contains(line, "(default: false)") {
					t.Errorf("acolyte %s --help prints a switch's default: %s", name, strings.TrimSpace(line))
				}
			}
			if !strings.Contains(text, "GLOBAL OPTIONS:\n   "+strings.Join(globals, ", ")+" (see acolyte --help)") {
				t.Errorf("acolyte %s --help does not name the global flags:\n%s", name, text)
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, cmd.Commands())
}
