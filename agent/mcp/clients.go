package mcp

import (
	"fmt"
	"slices"
	"strings"
)

// Client is an MCP client acolyte knows how to register with. What
// `acolyte mcp --print-config NAME` prints and what the README shows both
// come from this one table.
type Client struct {
	Name  string // the --print-config argument
	Title string
	// Command, when set, registers acolyte from the shell.
	Command string
	// File says where Config goes; Config is complete, valid file content.
	File   string
	Config string
}

// serverJSON is the stdio server entry for the clients that share the
// "mcpServers" JSON layout.
const serverJSON = `{
  "mcpServers": {
    "acolyte": {
      "command": "acolyte",
      "args": ["mcp"]
    }
  }
}
`

// Clients lists every supported client. Each starts `acolyte mcp` in the
// directory it was opened in, which is how the server finds the repository
// whose memories it serves.
var Clients = []Client{
	{
		Name:    "claude",
		Title:   "Claude Code",
		Command: "claude mcp add acolyte -- acolyte mcp   # --scope user: in every project",
		File:    ".mcp.json at the repository root, to share it with everyone who clones it",
		Config:  serverJSON,
	},
	{
		Name:  "codex",
		Title: "Codex CLI",
		File:  "~/.codex/config.toml",
		Config: `[mcp_servers.acolyte]
command = "acolyte"
args = ["mcp"]
`,
	},
	{
		Name:   "cursor",
		Title:  "Cursor",
		File:   ".cursor/mcp.json in the repository, or ~/.cursor/mcp.json for every project",
		Config: serverJSON,
	},
	{
		Name:   "gemini",
		Title:  "Gemini CLI",
		File:   "~/.gemini/settings.json (merge the mcpServers key into what is there)",
		Config: serverJSON,
	},
}

// Instructions says where Config goes. `acolyte mcp --print-config` prints
// it on stderr and Config alone on stdout, so that redirecting stdout into
// the file writes a valid one.
func (c Client) Instructions() string {
	if c.Command != "" {
		return fmt.Sprintf("%s: run once inside the repository:\n\n    %s\n\nor add what stdout shows to %s.\n", c.Title, c.Command, c.File)
	}
	return fmt.Sprintf("%s: add what stdout shows to %s.\n", c.Title, c.File)
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
