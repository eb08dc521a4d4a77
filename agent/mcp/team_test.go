package mcp_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/internal/pgtest"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// TestTeamScopeComesBackWithTheDatabase (issue #24): an MCP server started
// while the team database is down serves the team scope all along, fails
// a team call while the database is down with a message saying so, and,
// once the database is back, stores and finds team memories without a
// restart, over stdio and over HTTP.
func TestTeamScopeComesBackWithTheDatabase(t *testing.T) {
	srv := pgtest.Start(t)
	if _, err := postgres.Init(t.Context(), srv.URL("postgres", "postgres"), "red"); err != nil {
		t.Fatal(err)
	}
	srv.Admin(t, "postgres", "CREATE ROLE alice LOGIN", "GRANT acolyte_team_red TO alice")
	db := srv.NewDatabase(t)
	if _, err := postgres.Init(t.Context(), srv.URL("postgres", db), ""); err != nil {
		t.Fatal(err)
	}
	p := srv.Proxy(t)
	f := newFixture(t, committedMemory)
	team := []string{"ACOLYTE_TEAM_DB=" + p.URL("alice", db), "ACOLYTE_TEAM=red"}

	for _, road := range []string{"stdio", "http"} {
		t.Run(road, func(t *testing.T) {
			p.Refuse(true) // down before the server starts
			var cs *sdk.ClientSession
			if road == "stdio" {
				cmd := exec.Command(acolyteBin, "mcp")
				cmd.Dir, cmd.Env = f.repo, append(f.env(), team...)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var err error
				cs, err = sdk.NewClient(&sdk.Implementation{Name: "team", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
			} else {
				cs, _ = connectHTTP(t, serveHTTP(t, f, f.repo, team), f.repo)
			}
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(addSchema(t, tools), `"team"`) {
				t.Fatalf("with the team database down at start, memory_add does not offer the team scope: %s", addSchema(t, tools))
			}
			fact := "The " + road + " road's team fact: deploys need a second approver"
			var coded toolbox.Error
			res := callTool(t, cs, "memory_add", map[string]any{"content": fact, "scope": "team"}, &coded)
			if !res.IsError || strings.Contains(coded.Message, "unknown scope") || coded.Code == toolbox.CodeInvalidArgs {
				t.Fatalf("memory_add to a team database that is down = %+v, want a failure that says the database is unreachable", coded)
			}

			p.Refuse(false) // the database is back
			// A failed connection is not retried for a second
			// (postgres.Remote's retryAfter), so a model calling in a
			// loop does not hammer a server that is down.
			var added toolbox.MemoryAdded
			back := time.Now()
			for {
				res = callTool(t, cs, "memory_add", map[string]any{"content": fact, "scope": "team"}, nil)
				text := res.Content[0].(*sdk.TextContent).Text
				if !res.IsError && json.Unmarshal([]byte(text), &added) == nil && added.Scope == "team" {
					break
				}
				if time.Since(back) > 10*time.Second {
					t.Fatalf("10s after the team database came back, memory_add scope team = %s", text)
				}
				time.Sleep(100 * time.Millisecond)
			}
			t.Logf("team scope back %v after the database", time.Since(back).Round(10*time.Millisecond))
			var hits toolbox.MemoryHits
			callTool(t, cs, "memory_search", map[string]any{"query": "who approves deploys", "scope": "team"}, &hits)
			if !hasID(hits, added.ID) {
				t.Errorf("the team memory added after the database came back is not found: %+v", hits)
			}
		})
	}
}

func addSchema(t *testing.T, tools *sdk.ListToolsResult) string {
	t.Helper()
	for _, tool := range tools.Tools {
		if tool.Name == "memory_add" {
			b, err := json.Marshal(tool.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatal("no memory_add")
	return ""
}
