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
	// httpLayout is the entry for `acolyte mcp --http`: the server's URL,
	// and the bearer token read from the environment variable tokenVar
	// (as each client expands one), or prompted for.
	httpLayout func(url, tokenVar string) string
	// httpRegister, when set, registers the HTTP server by shell commands.
	httpRegister func(url, tokenVar string) [][2]string
}

// HTTPConfig is complete, valid file content that connects to acolyte's
// Streamable HTTP server at url, sending the token the server was started
// with (tokenVar, ACOLYTE_MCP_TOKEN) as its bearer token.
func (c Client) HTTPConfig(url, tokenVar string) string { return c.httpLayout(url, tokenVar) }

// HTTPCommands are the shell commands that register the HTTP server, each
// with what it is for; none when the client is set up by its file alone.
func (c Client) HTTPCommands(url, tokenVar string) [][2]string {
	if c.httpRegister == nil {
		return nil
	}
	return c.httpRegister(url, tokenVar)
}

// HTTPInstructions says where HTTPConfig goes and how the token gets to
// the client; `acolyte mcp --print-config CLIENT --http ADDR` prints it
// on stderr.
func (c Client) HTTPInstructions(url, tokenVar string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, over Streamable HTTP at %s. Choose a token once and keep it where both the\n"+
		"server and %s read it (your shell profile); the server then keeps it across restarts:\n\n"+
		"    export %s=$(openssl rand -hex 32)\n    acolyte mcp --http %s\n\n",
		c.Title, url, c.Title, tokenVar, strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path))
	if c.Name == "vscode" {
		fmt.Fprintf(&b, "VS Code asks for the token once, on the first start, and keeps it.\n")
	}
	if cmds := c.HTTPCommands(url, tokenVar); len(cmds) > 0 {
		b.WriteString("Then run once inside the repository:\n\n")
		for _, cmd := range cmds {
			fmt.Fprintf(&b, "    %s\n        (%s)\n", cmd[1], cmd[0])
		}
		fmt.Fprintf(&b, "\nor add what stdout shows to %s.\n", c.File)
		return b.String()
	}
	fmt.Fprintf(&b, "Then add what stdout shows to %s.\n", c.File)
	return b.String()
}

// httpServers is the HTTP server entry for the clients that share the
// "mcpServers" JSON layout; urlKey is the key the client reads the URL
// from, typ its "type", if any, and header the Authorization value.
func httpServers(urlKey, typ, header string) func(url, tokenVar string) string {
	return func(url, tokenVar string) string {
		t := ""
		if typ != "" {
			t = `
      "type": ` + quoted(typ) + `,`
		}
		return `{
  "mcpServers": {
    "acolyte": {` + t + `
      ` + quoted(urlKey) + `: ` + quoted(url) + `,
      "headers": { "Authorization": ` + quoted(fmt.Sprintf(header, tokenVar)) + ` }
    }
  }
}
`
	}
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
		// Claude Code expands ${VAR} in .mcp.json.
		httpLayout: httpServers("url", "http", "Bearer ${%s}"),
		httpRegister: func(url, tokenVar string) [][2]string {
			// Double quotes: the shell puts the token in, and Claude keeps it.
			header := `"Authorization: Bearer $` + tokenVar + `"`
			return [][2]string{
				{"in this project", "claude mcp add --transport http acolyte " + shellWord(url) + " --header " + header},
				{"in every project", "claude mcp add --transport http --scope user acolyte " + shellWord(url) + " --header " + header},
			}
		},
	},
	{
		Name:   "codex",
		Title:  "Codex CLI",
		File:   "~/.codex/config.toml",
		Format: "toml",
		layout: func(command string) string {
			return "[mcp_servers.acolyte]\ncommand = " + quoted(command) + "\nargs = [\"mcp\"]\n"
		},
		// Codex reads the bearer token from the variable it names.
		httpLayout: func(url, tokenVar string) string {
			return "[mcp_servers.acolyte]\nurl = " + quoted(url) + "\nbearer_token_env_var = " + quoted(tokenVar) + "\n"
		},
	},
	{
		Name:   "cursor",
		Title:  "Cursor",
		File:   ".cursor/mcp.json in the repository, or ~/.cursor/mcp.json for every project",
		Format: "json",
		layout: mcpServers,
		// Cursor expands ${env:VAR} in mcp.json.
		httpLayout: httpServers("url", "", "Bearer ${env:%s}"),
	},
	{
		Name:   "gemini",
		Title:  "Gemini CLI",
		File:   "~/.gemini/settings.json (merge the mcpServers key into what is there)",
		Format: "json",
		layout: mcpServers,
		// Gemini CLI reads Streamable HTTP from httpUrl (url is SSE), and
		// expands $VAR and ${VAR} in settings.json.
		httpLayout: httpServers("httpUrl", "", "Bearer ${%s}"),
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
		// VS Code asks for the token once (an input) and stores it.
		httpLayout: func(url, tokenVar string) string {
			return `{
  "inputs": [
    {
      "type": "promptString",
      "id": "acolyte-mcp-token",
      "description": ` + quoted("acolyte mcp --http bearer token ("+tokenVar+")") + `,
      "password": true
    }
  ],
  "servers": {
    "acolyte": {
      "type": "http",
      "url": ` + quoted(url) + `,
      "headers": { "Authorization": "Bearer ${input:acolyte-mcp-token}" }
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
