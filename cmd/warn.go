package cmd

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/internal/termtext"
)

// A warning is what a command that still answers says on stderr about
// what it could not do: `warning: MESSAGE`, or under --json one line
// {"warning":{"code":CODE,"message":MESSAGE}} (cmd/JSON.md, "Warnings"),
// so that a script reading a --json search can tell that the team's
// memories are missing from it without parsing English.
const (
	// warnTeamLeftOut: the team database did not answer in time, or could
	// not be reached, and the answer holds local memories alone.
	warnTeamLeftOut = "team_left_out"
	// warnOther is every other warning.
	warnOther = "warning"
)

// warningCodes lists every code warn is given, for TestWarningCodesMatchDoc.
var warningCodes = []string{warnTeamLeftOut, warnOther}

// jsonWarning is the --json form of a warning.
type jsonWarning struct {
	Warning struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"warning"`
}

// warn says msg on stderr as a warning with code. msg may hold memory or
// model text: the text form escapes it, and JSON escapes it by itself.
func warn(c *cli.Context, code, msg string) {
	if !c.Bool("json") {
		fmt.Fprintln(c.App.ErrWriter, "warning:", termtext.EscapeText(msg))
		return
	}
	var out jsonWarning
	out.Warning.Code, out.Warning.Message = code, msg
	enc := json.NewEncoder(c.App.ErrWriter)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out) // a warning that cannot be written cannot be reported either
}
