package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/agent/mcp"
)

const flagPrintConfig = "print-config"

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the memory tools to another coding agent over MCP (stdio)",
		Description: "Claude Code, Codex, Cursor and Gemini CLI start this themselves; it speaks MCP on\n" +
			"stdin/stdout and serves memory_search, memory_add, memory_remove and memory_list for the\n" +
			"repository it was started in. Print the setup for a client with --print-config.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: flagPrintConfig, Usage: "print the configuration for `CLIENT` (" +
				strings.Join(mcp.ClientNames(), ", ") + ") on stdout, where it goes on stderr, and exit"},
		},
		Action: runMCP,
	}
}

func runMCP(c *cli.Context) error {
	if name := c.String(flagPrintConfig); name != "" {
		client, err := mcp.LookupClient(name)
		if err != nil {
			return usage(err)
		}
		// Only the config goes to stdout, so `> .mcp.json` writes a valid file.
		if _, err := io.WriteString(c.App.ErrWriter, client.Instructions()); err != nil {
			return err
		}
		_, err = io.WriteString(c.App.Writer, client.Config)
		return err
	}
	ws, err := openWorkspace(c)
	if err != nil {
		return err
	}
	defer ws.Close()

	// No BeforeCall: in a repository the toolkit is a gitsync.Workspace,
	// which re-imports .acolyte/ itself whenever its content changed.
	server := mcp.New(ws.Toolkit, mcp.Options{
		Version:  c.App.Version,
		Root:     ws.Root,
		Embedder: embedderName(ws.Store),
		// stdout belongs to the protocol; diagnostics go where clients log stderr.
		Logger: slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	err = server.Run(c.Context, mcp.Transport(c.App.Reader, c.App.Writer))
	// The client closing stdin, or the user pressing ^C, is how a session ends.
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("mcp: %w", err)
}
