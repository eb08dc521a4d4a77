package cmd

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// settingRow is one setting config.json may hold, as README.md's settings
// table lists it (TestSettingsTableMatchesREADME).
type settingRow struct {
	key, flag, env string
}

// settingRows describes every config.json key from the flag that has it.
func settingRows() []settingRow {
	flags := append(globalFlags(), agentFlags()...)
	var out []settingRow
	for _, name := range settingNames() {
		i := slices.IndexFunc(flags, func(f cli.Flag) bool { return f.Names()[0] == name })
		if i < 0 {
			continue // TestSettingsTableMatchesREADME reports a key without a flag
		}
		row := settingRow{key: name, flag: "--" + name}
		if df, ok := flags[i].(cli.DocGenerationFlag); ok {
			row.env = strings.Join(df.GetEnvVars(), ", ")
		}
		out = append(out, row)
	}
	return out
}
