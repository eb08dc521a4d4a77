package cmd

import (
	"cmp"
	"fmt"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/gemini"
	"github.com/acolyte-dev/acolyte/memory/embed/minilm"
	"github.com/acolyte-dev/acolyte/memory/embed/openai"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
)

// Names of the embedder settings; each is a flag, an ACOLYTE_ variable and
// a config.json key.
const (
	flagEmbedModel = "embed-model"
	flagEmbedURL   = "embed-url"
	flagEmbedDim   = "embed-dim"
)

func embedderFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: flagEmbedder, EnvVars: []string{"ACOLYTE_EMBEDDER"}, Usage: "embedder: minilm (built in, offline: the static table at once, the MiniLM encoder's vectors as soon as they are made), static (the table alone), gemini (sends memory text to Google) or openai (sends it to --embed-url); an API key alone never chooses one", Value: "minilm"},
		&cli.StringFlag{Name: flagEmbedModel, EnvVars: []string{"ACOLYTE_EMBED_MODEL"}, Usage: "embedding model for gemini or openai (default: " + gemini.DefaultModel + ", " + openai.DefaultModel + ")"},
		&cli.StringFlag{Name: flagEmbedURL, EnvVars: []string{"ACOLYTE_EMBED_URL"}, Usage: "OpenAI-compatible endpoint for --embedder openai (default: " + openai.DefaultBaseURL + ", Ollama)"},
		&cli.StringFlag{Name: flagEmbedDim, EnvVars: []string{"ACOLYTE_EMBED_DIM"}, Usage: "vector dimension to request (default: the model's own)"},
	}
}

// geminiKey is the Gemini API key from the environment, the same for the
// embedder and the model so the two never bill different keys.
func geminiKey() string { return gemini.KeyFromEnv(os.Getenv) }

// chooseEmbedder builds the embedder the settings name: the built-in one
// unless the user chose another.
func chooseEmbedder(c *cli.Context) (memory.Embedder, error) {
	dim := 0
	if d := global(c, flagEmbedDim); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n <= 0 {
			return nil, usage(fmt.Errorf("--%s %q: give a positive whole number", flagEmbedDim, d))
		}
		dim = n
	}
	// Only a choice the user made (flag, ACOLYTE_EMBEDDER, config.json)
	// sends memory text anywhere: an API key set in the shell for
	// something else chooses nothing.
	name := global(c, flagEmbedder)
	switch name {
	case "", "minilm":
		return memory.WithInstant(minilm.New(), static.New()), nil
	case "static":
		return static.New(), nil
	case "gemini":
		e, err := gemini.New(c.Context, gemini.Config{APIKey: geminiKey(), Model: global(c, flagEmbedModel), Dim: dim})
		if err != nil {
			return nil, usage(err)
		}
		return e, nil
	case "openai":
		e, err := openai.New(openai.Config{BaseURL: global(c, flagEmbedURL), Model: global(c, flagEmbedModel), APIKey: os.Getenv("OPENAI_API_KEY"), Dim: dim})
		if err != nil {
			return nil, usage(err)
		}
		return e, nil
	default:
		return nil, usage(fmt.Errorf("unknown embedder %q: use minilm, static, gemini or openai", name))
	}
}

// textDestination says where memory text goes to be embedded: "" for the
// built-in embedder, which sends it nowhere.
func textDestination(c *cli.Context) string {
	switch global(c, flagEmbedder) {
	case "gemini":
		return "Google's Gemini API (generativelanguage.googleapis.com), to embed it"
	case "openai":
		return cmp.Or(global(c, flagEmbedURL), openai.DefaultBaseURL) + ", to embed it"
	}
	return ""
}
