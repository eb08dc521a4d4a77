package cmd

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
)

// chooseEmbedder picks the embedder named by flag, env or config.
func chooseEmbedder(c *cli.Context) (memory.Embedder, error) {
	switch name := global(c, flagEmbedder); name {
	case "", "static":
		return static.New(), nil
	default:
		return nil, usage(fmt.Errorf("unknown embedder %q: use static, gemini or openai", name))
	}
}
