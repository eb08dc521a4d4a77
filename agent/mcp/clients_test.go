package mcp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/acolyte-dev/acolyte/agent/mcp"
)

// serverEntry is what every client's config must say: start `acolyte mcp`.
type serverEntry struct {
	Command string
	Args    []string
}

// parseConfig parses a client's config as that client would, by the format
// its file has, and returns acolyte's server entry.
func parseConfig(t *testing.T, c mcp.Client, config string) serverEntry {
	t.Helper()
	switch {
	case strings.HasSuffix(strings.Fields(c.File)[0], ".json"):
		var cfg struct {
			MCPServers map[string]serverEntry `json:"mcpServers"`
		}
		dec := json.NewDecoder(strings.NewReader(config))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			t.Fatalf("%s config is not valid JSON: %v\n%s", c.Name, err, config)
		}
		if dec.More() {
			t.Fatalf("%s config has text after the JSON:\n%s", c.Name, config)
		}
		return cfg.MCPServers["acolyte"]
	case strings.HasSuffix(strings.Fields(c.File)[0], ".toml"):
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
	t.Fatalf("no parser for %s's config file %s", c.Name, c.File)
	return serverEntry{}
}

// TestClientConfigsStartTheServer checks every config parses in its file's
// format and starts `acolyte mcp`.
func TestClientConfigsStartTheServer(t *testing.T) {
	for _, c := range mcp.Clients {
		t.Run(c.Name, func(t *testing.T) {
			if s := parseConfig(t, c, c.Config); s.Command != "acolyte" || strings.Join(s.Args, " ") != "mcp" {
				t.Errorf("server entry = %+v", s)
			}
			if c.Command != "" && !strings.HasPrefix(c.Command, "claude mcp add acolyte -- acolyte mcp") {
				t.Errorf("command = %q", c.Command)
			}
		})
	}
}

// TestPrintConfig runs the real command: stdout is the config alone, so
// `acolyte mcp --print-config claude > .mcp.json` writes a file the client
// parses, and where it goes is on stderr.
func TestPrintConfig(t *testing.T) {
	for _, c := range mcp.Clients {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(acolyteBin, "mcp", "--print-config", strings.ToUpper(c.Name))
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("--print-config %s: %v\n%s", c.Name, err, stderr.Bytes())
		}
		if stdout.String() != c.Config {
			t.Errorf("--print-config %s printed on stdout\n%s\nwant only the config\n%s", c.Name, stdout.Bytes(), c.Config)
		}
		if s := parseConfig(t, c, stdout.String()); s.Command != "acolyte" {
			t.Errorf("--print-config %s: server entry = %+v", c.Name, s)
		}
		if !strings.Contains(stderr.String(), c.File) || !strings.Contains(stderr.String(), c.Title) {
			t.Errorf("--print-config %s should say on stderr where the config goes, got %q", c.Name, stderr.Bytes())
		}
		if c.Command != "" && !strings.Contains(stderr.String(), c.Command) {
			t.Errorf("--print-config %s should show %q on stderr", c.Name, c.Command)
		}
	}

	cmd := exec.Command(acolyteBin, "mcp", "--print-config", "vscode")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("unknown client: %v, want exit status 2", err)
	}
	if !strings.Contains(string(out), `"vscode"`) || !strings.Contains(string(out), "claude, codex, cursor, gemini") {
		t.Errorf("unknown client message should name it and the choices, got %s", out)
	}
}
