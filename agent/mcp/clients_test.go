package mcp_test

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/agent/mcp"
)

// TestClientConfigsStartTheServer checks every JSON config parses and starts
// `acolyte mcp`, and that the TOML and the shell command say the same.
func TestClientConfigsStartTheServer(t *testing.T) {
	for _, c := range mcp.Clients {
		t.Run(c.Name, func(t *testing.T) {
			switch {
			case strings.HasPrefix(c.Config, "{"):
				var cfg struct {
					MCPServers map[string]struct {
						Command string
						Args    []string
					}
				}
				if err := json.Unmarshal([]byte(c.Config), &cfg); err != nil {
					t.Fatalf("config is not valid JSON: %v", err)
				}
				s := cfg.MCPServers["acolyte"]
				if s.Command != "acolyte" || strings.Join(s.Args, " ") != "mcp" {
					t.Errorf("server entry = %+v", s)
				}
			case c.Name == "codex":
				for _, line := range []string{"[mcp_servers.acolyte]", `command = "acolyte"`, `args = ["mcp"]`} {
					if !strings.Contains(c.Config, line+"\n") {
						t.Errorf("config lacks %s:\n%s", line, c.Config)
					}
				}
			default:
				t.Fatalf("no check for the %s config format", c.Name)
			}
			if c.Command != "" && !strings.HasPrefix(c.Command, "claude mcp add acolyte -- acolyte mcp") {
				t.Errorf("command = %q", c.Command)
			}
			if !strings.Contains(c.Snippet(), c.Config) {
				t.Error("snippet does not contain the config verbatim")
			}
		})
	}
}

// TestPrintConfig runs the real command: what it prints is the table entry.
func TestPrintConfig(t *testing.T) {
	for _, c := range mcp.Clients {
		out, err := exec.Command(acolyteBin, "mcp", "--print-config", strings.ToUpper(c.Name)).Output()
		if err != nil {
			t.Fatalf("--print-config %s: %v", c.Name, err)
		}
		if string(out) != c.Snippet() {
			t.Errorf("--print-config %s printed\n%s\nwant\n%s", c.Name, out, c.Snippet())
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
