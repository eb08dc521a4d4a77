package mcp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/acolyte-dev/acolyte/agent/mcp"
)

// serverEntry is what every client's config must say: start `acolyte mcp`.
type serverEntry struct {
	Type    string `json:"type,omitempty"`
	Command string
	Args    []string
}

// parseConfig parses a client's config as that client reads its file, and
// returns acolyte's server entry: Claude Code, Cursor and Gemini CLI read
// JSON under mcpServers, VS Code JSON under servers with a type, Codex
// TOML under mcp_servers.
func parseConfig(t *testing.T, c mcp.Client, config string) serverEntry {
	t.Helper()
	switch c.Format {
	case "json":
		var cfg struct {
			MCPServers map[string]serverEntry `json:"mcpServers"`
			Servers    map[string]serverEntry `json:"servers"`
		}
		dec := json.NewDecoder(strings.NewReader(config))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			t.Fatalf("%s config is not valid JSON: %v\n%s", c.Name, err, config)
		}
		if dec.More() {
			t.Fatalf("%s config has text after the JSON:\n%s", c.Name, config)
		}
		if c.Name == "vscode" {
			if cfg.MCPServers != nil || cfg.Servers["acolyte"].Type != "stdio" {
				t.Fatalf("VS Code reads servers, each with a type, from .vscode/mcp.json:\n%s", config)
			}
			return cfg.Servers["acolyte"]
		}
		if cfg.Servers != nil || cfg.MCPServers["acolyte"].Type != "" {
			t.Fatalf("%s reads mcpServers:\n%s", c.Name, config)
		}
		return cfg.MCPServers["acolyte"]
	case "toml":
		var cfg struct {
			MCPServers map[string]serverEntry `toml:"mcp_servers"`
		}
		md, err := toml.Decode(config, &cfg)
		if err != nil {
			t.Fatalf("%s config is not valid TOML: %v\n%s", c.Name, err, config)
		}
		if len(md.Undecoded()) > 0 {
			t.Fatalf("%s config has keys a client would not expect: %v", c.Name, md.Undecoded())
		}
		return cfg.MCPServers["acolyte"]
	}
	t.Fatalf("no parser for %s's config format %q", c.Name, c.Format)
	return serverEntry{}
}

// commands are the names a snippet may start acolyte by: on PATH, and
// absolute paths that need quoting in every format.
var commands = []string{"acolyte", "/opt/my tools/acolyte", `C:\Program Files\acolyte "dev"\acolyte.exe`, "/home/o'neil/bin/acolyte"}

// TestClientConfigsStartTheServer checks every config parses in its
// client's format and starts `COMMAND mcp`, for every command.
func TestClientConfigsStartTheServer(t *testing.T) {
	for _, c := range mcp.Clients {
		for _, command := range commands {
			t.Run(c.Name, func(t *testing.T) {
				if s := parseConfig(t, c, c.Config(command)); s.Command != command || strings.Join(s.Args, " ") != "mcp" {
					t.Errorf("server entry = %+v, want %q mcp", s, command)
				}
			})
		}
	}
}

// TestClaudeCommandsGiveClaudeItsOwnFlags runs each `claude mcp add` line
// through a real shell, with claude replaced by a printer of its
// arguments: Claude's flags must come before --, and after it only the
// command acolyte runs as.
func TestClaudeCommandsGiveClaudeItsOwnFlags(t *testing.T) {
	claude, err := mcp.LookupClient("claude")
	if err != nil {
		t.Fatal(err)
	}
	for _, command := range commands {
		cmds := claude.Commands(command)
		if len(cmds) != 2 {
			t.Fatalf("want a project and a user command, got %q", cmds)
		}
		var scopes []string
		for _, cmd := range cmds {
			line := cmd[1]
			if !strings.HasPrefix(line, "claude ") || strings.Contains(line, "#") && !strings.Contains(command, "#") {
				t.Fatalf("%q should be a plain claude command", line)
			}
			out, err := exec.Command("sh", "-c", `printf '%s\n' `+strings.TrimPrefix(line, "claude ")).Output()
			if err != nil {
				t.Fatalf("sh -c %q: %v", line, err)
			}
			args := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			dash := slices.Index(args, "--")
			if dash < 0 || !slices.Equal(args[dash+1:], []string{command, "mcp"}) {
				t.Fatalf("%q: claude gets %q; after -- it must run %q mcp and nothing else", line, args, command)
			}
			if args[0] != "mcp" || args[1] != "add" || args[dash-1] != "acolyte" {
				t.Fatalf("%q: claude gets %q", line, args)
			}
			scope := "local"
			if i := slices.Index(args[:dash], "--scope"); i >= 0 {
				scope = args[i+1]
			}
			scopes = append(scopes, scope)
		}
		if !slices.Equal(scopes, []string{"local", "user"}) {
			t.Errorf("scopes %q, want one command for this project and one with --scope user", scopes)
		}
	}
}

// TestPrintConfig runs the real command: stdout is the config alone, so
// `acolyte mcp --print-config claude > .mcp.json` writes a file the client
// parses, and where it goes is on stderr.
func TestPrintConfig(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "my tools", "acolyte")
	for _, c := range mcp.Clients {
		for _, command := range []string{"acolyte", abs} {
			var stdout, stderr bytes.Buffer
			args := []string{"mcp", "--print-config", strings.ToUpper(c.Name)}
			if command != "acolyte" {
				args = append(args, "--command", command)
			}
			cmd := exec.Command(acolyteBin, args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v\n%s", args, err, stderr.Bytes())
			}
			if stdout.String() != c.Config(command) {
				t.Errorf("%s printed on stdout\n%s\nwant only the config\n%s", args, stdout.Bytes(), c.Config(command))
			}
			if s := parseConfig(t, c, stdout.String()); s.Command != command {
				t.Errorf("%s: server entry = %+v, want command %q", args, s, command)
			}
			if !strings.Contains(stderr.String(), c.File) || !strings.Contains(stderr.String(), c.Title) {
				t.Errorf("%s should say on stderr where the config goes, got %q", args, stderr.Bytes())
			}
			for _, reg := range c.Commands(command) {
				if !strings.Contains(stderr.String(), reg[1]) {
					t.Errorf("%s should show %q on stderr", args, reg[1])
				}
			}
		}
	}

	cmd := exec.Command(acolyteBin, "mcp", "--print-config", "zed")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("unknown client: %v, want exit status 2", err)
	}
	if !strings.Contains(string(out), `"zed"`) || !strings.Contains(string(out), "claude, codex, cursor, gemini, vscode") {
		t.Errorf("unknown client message should name it and the choices, got %s", out)
	}
}

// TestPrintConfigHTTP starts `acolyte mcp --http` with a chosen token, has
// --print-config --http print each client's setup for it, reads each as
// its client does (the URL key it reads, the token as it expands it from
// the environment or its prompt), and sends initialize with what it read:
// the server answers each, and refuses the header unexpanded.
func TestPrintConfigHTTP(t *testing.T) {
	f := newFixture(t)
	const token = "a-token-of-my-choosing-0123456789"
	s := serveHTTP(t, f, f.repo, []string{"ACOLYTE_MCP_TOKEN=" + token})
	addr := strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), mcp.Path)
	for _, c := range mcp.Clients {
		t.Run(c.Name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(acolyteBin, "mcp", "--print-config", c.Name, "--http", addr)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, stderr.Bytes())
			}
			if !strings.Contains(stderr.String(), "export ACOLYTE_MCP_TOKEN=") || !strings.Contains(stderr.String(), c.File) {
				t.Errorf("stderr should say how to start the server and where the config goes:\n%s", stderr.Bytes())
			}
			url, header := readHTTPConfig(t, c, stdout.String(), token)
			if url != s.url {
				t.Errorf("the config points at %s; the server is at %s", url, s.url)
			}
			if code, body := post(t, httpServer{url: url}, map[string]string{"Authorization": header}); code != http.StatusOK {
				t.Errorf("initialize with the header as %s reads it: %d %s", c.Title, code, body)
			}
			if raw := rawHeader(stdout.String()); raw != "" {
				if code, _ := post(t, httpServer{url: url}, map[string]string{"Authorization": raw}); code != http.StatusUnauthorized {
					t.Errorf("the unexpanded header %q got %d, want 401", raw, code)
				}
			}
			for _, reg := range c.HTTPCommands(s.url, "ACOLYTE_MCP_TOKEN") {
				out, err := exec.Command("sh", "-c", `printf '%s\n' `+strings.TrimPrefix(reg[1], "claude ")).Output()
				if err != nil {
					t.Fatal(err)
				}
				args := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
				i := slices.Index(args, "--header")
				if i < 0 || !slices.Contains(args, s.url) || !slices.Contains(args, "--transport") {
					t.Errorf("%q gives claude %q", reg[1], args)
				}
				if !strings.Contains(stderr.String(), reg[1]) {
					t.Errorf("stderr should show %q", reg[1])
				}
			}
		})
	}
	// README shows Gemini CLI's, as --print-config gemini --http 8765 prints it.
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	gemini, _ := mcp.LookupClient("gemini")
	if want := "```json\n" + gemini.HTTPConfig("http://127.0.0.1:8765/mcp", "ACOLYTE_MCP_TOKEN") + "```"; !strings.Contains(string(readme), want) {
		t.Errorf("README.md should show Gemini CLI's HTTP setup as --print-config prints it:\n%s", want)
	}
	if err := exec.Command(acolyteBin, "mcp", "--print-config", "claude", "--http", "8765", "--command", "/x/acolyte").Run(); err == nil {
		t.Error("--command with --http: want a usage error, the client starts nothing")
	}
}

// readHTTPConfig reads the URL and the Authorization header a client
// sends, from its HTTP config, expanding the token as that client does.
func readHTTPConfig(t *testing.T, c mcp.Client, config, token string) (url, header string) {
	t.Helper()
	env := map[string]string{"ACOLYTE_MCP_TOKEN": token}
	if c.Format == "toml" {
		var cfg struct {
			MCPServers map[string]struct {
				URL         string `toml:"url"`
				BearerToken string `toml:"bearer_token_env_var"`
			} `toml:"mcp_servers"`
		}
		md, err := toml.Decode(config, &cfg)
		if err != nil || len(md.Undecoded()) > 0 {
			t.Fatalf("%s: %v %v\n%s", c.Name, err, md.Undecoded(), config)
		}
		e := cfg.MCPServers["acolyte"]
		return e.URL, "Bearer " + env[e.BearerToken]
	}
	type entry struct {
		Type    string            `json:"type"`
		URL     string            `json:"url"`
		HTTPURL string            `json:"httpUrl"`
		Headers map[string]string `json:"headers"`
	}
	var cfg struct {
		MCPServers map[string]entry `json:"mcpServers"`
		Servers    map[string]entry `json:"servers"`
		Inputs     []struct {
			Type, ID, Description string
			Password              bool
		} `json:"inputs"`
	}
	dec := json.NewDecoder(strings.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("%s: %v\n%s", c.Name, err, config)
	}
	var e entry
	var expand func(string) string // each client below expands its own syntax
	switch c.Name {
	case "claude": // .mcp.json: type http, url, ${VAR}
		e = cfg.MCPServers["acolyte"]
		if e.Type != "http" {
			t.Errorf("Claude Code reads type http: %+v", e)
		}
		expand = func(s string) string { return os.Expand(s, func(k string) string { return env[k] }) }
	case "cursor": // url, ${env:VAR}
		e = cfg.MCPServers["acolyte"]
		expand = func(s string) string {
			return os.Expand(s, func(k string) string {
				if name, ok := strings.CutPrefix(k, "env:"); ok {
					return env[name]
				}
				return "${" + k + "}" // Cursor expands ${env:VAR}, not ${VAR}
			})
		}
	case "gemini": // httpUrl is Streamable HTTP (url is SSE), $VAR or ${VAR}
		e = cfg.MCPServers["acolyte"]
		e.URL = e.HTTPURL
		expand = func(s string) string { return os.Expand(s, func(k string) string { return env[k] }) }
	case "vscode": // servers, type http, ${input:ID} of a declared password input
		e = cfg.Servers["acolyte"]
		if e.Type != "http" || len(cfg.Inputs) != 1 || !cfg.Inputs[0].Password || cfg.Inputs[0].Type != "promptString" {
			t.Errorf("VS Code: %+v, inputs %+v", e, cfg.Inputs)
		}
		expand = func(s string) string {
			return strings.ReplaceAll(s, "${input:"+cfg.Inputs[0].ID+"}", token)
		}
	default:
		t.Fatalf("no reader for %s", c.Name)
	}
	return e.URL, expand(e.Headers["Authorization"])
}

// rawHeader is the Authorization value of a JSON config as written.
func rawHeader(config string) string {
	_, rest, ok := strings.Cut(config, `"Authorization": "`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}
