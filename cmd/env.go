package cmd

import (
	"github.com/urfave/cli/v2"
)

// Names of the global flags, shared by every command that reads them.
const (
	flagHome     = "home"
	flagEmbedder = "embedder"
	flagSession  = "session"
	flagRepo     = "repo"
)

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: flagHome, EnvVars: []string{"ACOLYTE_HOME"}, Usage: "where acolyte keeps its database and config (default: $XDG_DATA_HOME/acolyte)"},
		&cli.StringFlag{Name: flagEmbedder, EnvVars: []string{"ACOLYTE_EMBEDDER"}, Usage: "embedder: static (built in, offline), gemini or openai (default: gemini when a key is set, else static)"},
		&cli.StringFlag{Name: flagSession, EnvVars: []string{"ACOLYTE_SESSION"}, Usage: "session id for session-scope memories"},
		&cli.StringFlag{Name: flagRepo, Usage: "run as if started in this directory", Value: "."},
	}
}
