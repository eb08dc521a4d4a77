package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync/hooks"
	"github.com/urfave/cli/v2"
)

// The shapes below are printed by --json and documented in cmd/JSON.md;
// TestJSONOutputMatchesDoc holds the two together.

// printHooks prints the hooks' state after hooks install or uninstall, in
// the shape of hooks status --json, so a script reads all three alike.
func printHooks(c *cli.Context, w *workspace) error {
	states, driver, err := hooks.Status(c.Context, w.Repo)
	if err != nil {
		return err
	}
	return printJSON(c, map[string]any{"hooks": states, "merge_driver": driver})
}

// notInstalled is hooks status's failure: it names the fixes the lines
// above it gave, each once, so that the last line does not send a
// lefthook user to acolyte hooks install after saying lefthook install.
func notInstalled(states []hooks.State, driver bool) error {
	var fixes []string
	installed := driver
	for _, h := range states {
		if (!h.Installed || h.Upgrade) && h.Fix != "" && !slices.Contains(fixes, h.Fix) {
			fixes = append(fixes, h.Fix)
		}
		installed = installed && h.Installed
	}
	if fix := "acolyte hooks install"; !driver && !slices.Contains(fixes, fix) {
		fixes = append(fixes, fix)
	}
	if len(fixes) == 0 {
		fixes = append(fixes, "acolyte hooks install")
	}
	if installed {
		// Only an earlier acolyte's lines, which run acolyte but not only where it is.
		return fmt.Errorf("acolyte's lines in the hooks need updating; fix: %s", strings.Join(fixes, ", then "))
	}
	return fmt.Errorf("hooks are not fully installed; fix: %s", strings.Join(fixes, ", then "))
}

// allInstalled says whether hooks status must answer yes (0) or no (1),
// with or without --json: no when a hook does not run acolyte, or runs it
// through an earlier acolyte's line, which a teammate without acolyte
// hears as "acolyte: not found".
func allInstalled(states []hooks.State, driver bool) bool {
	for _, h := range states {
		if !h.Installed || h.Upgrade {
			return false
		}
	}
	return driver
}
