package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Client is an MCP client acolyte knows how to register with. What
// `acolyte mcp --print-config NAME` prints and what the README shows both
// come from this one table. Each snippet takes the command that starts
// acolyte: "acolyte" to find it on PATH, or an absolute path for clients
// started from a desktop, whose PATH often lacks the user's shell's.
type Client struct {
	Name  string // the --print-config argument
	Title string
	// File says where Config goes.
	File string
	// Format is the file's format, "json" or "toml".
	Format string
	// register, when set, gives shell commands that register acolyte
	// instead of editing File, each with what it is for.
	register func(command string) [][2]string
	layout   func(command string) string
}

// Config is complete, valid file content that starts `command mcp`.
func (c Client) Config(command string) string { return c.layout(command) }

// Commands are the shell commands that register acolyte, each with what
// it is for; none when the client is set up by its file alone.
func (c Client) Commands(command string) [][2]string {
	if c.register == nil {
		return nil
	}
	return c.register(command)
}

// quoted is s as a JSON string, which is also a valid TOML basic string.
func quoted(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// mcpServers is the stdio server entry for the clients that share the
// "mcpServers" JSON layout.
func mcpServers(command string) string {
	return `{
  "mcpServers": {
    "acolyte": {
      "command": ` + quoted(command) + `,
      "args": ["mcp"]
    }
  }
}
`
}

// Clients lists every supported client. Each starts `acolyte mcp` in the
// directory it was opened in and announces its workspace as roots, which
// is how the server finds the repository whose memories it serves.
var Clients = []Client{
	{
		Name:   "claude",
		Title:  "Claude Code",
		File:   ".mcp.json at the repository root, to share it with everyone who clones it",
		Format: "json",
		// Claude's own options go before the server's name: everything
		// after -- is the command it runs, so a --scope there would reach
		// acolyte instead.
		register: func(command string) [][2]string {
			return [][2]string{
				{"in this project", "claude mcp add acolyte -- " + shellWord(command) + " mcp"},
				{"in every project", "claude mcp add --scope user acolyte -- " + shellWord(command) + " mcp"},
			}
		},
		layout: mcpServers,
	},
	{
		Name:   "codex",
		Title:  "Codex CLI",
		File:   "~/.codex/config.toml",
		Format: "toml",
		layout: func(command string) string {
			return "[mcp_servers.acolyte]\ncommand = " + quoted(command) + "\nargs = [\"mcp\"]\n"
		},
	},
	{
		Name:   "cursor",
		Title:  "Cursor",
		File:   ".cursor/mcp.json in the repository, or ~/.cursor/mcp.json for every project",
		Format: "json",
		layout: mcpServers,
	},
	{
		Name:   "gemini",
		Title:  "Gemini CLI",
		File:   "~/.gemini/settings.json (merge the mcpServers key into what is there)",
		Format: "json",
		layout: mcpServers,
	},
	{
		Name:   "vscode",
		Title:  "VS Code",
		File:   ".vscode/mcp.json in the repository",
		Format: "json",
		layout: func(command string) string {
			return `{
  "servers": {
    "acolyte": {
      "type": "stdio",
      "command": ` + quoted(command) + `,
      "args": ["mcp"]
    }
  }
}
`
		},
	},
}

// Instructions says where Config goes. `acolyte mcp --print-config` prints
// it on stderr and Config alone on stdout, so that redirecting stdout into
// the file writes a valid one.
func (c Client) Instructions(command string) string {
	cmds := c.Commands(command)
	if len(cmds) == 0 {
		return fmt.Sprintf("%s: add what stdout shows to %s.\n", c.Title, c.File)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: run once inside the repository:\n\n", c.Title)
	for _, cmd := range cmds {
		fmt.Fprintf(&b, "    %s\n        (%s)\n", cmd[1], cmd[0])
	}
	fmt.Fprintf(&b, "\nor add what stdout shows to %s.\n", c.File)
	return b.String()
}

// ClientNames lists the accepted --print-config values.
func ClientNames() []string {
	names := make([]string, len(Clients))
	for i, c := range Clients {
		names[i] = c.Name
	}
	return names
}

// LookupClient finds a client by name, ignoring case.
func LookupClient(name string) (Client, error) {
	i := slices.IndexFunc(Clients, func(c Client) bool { return strings.EqualFold(c.Name, name) })
	if i < 0 {
		return Client{}, fmt.Errorf("unknown MCP client %q: use one of %s", name, strings.Join(ClientNames(), ", "))
	}
	return Clients[i], nil
}
