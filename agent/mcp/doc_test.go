package mcp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/acolyte-dev/acolyte/memory/team"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

// docTool is one tool's section of cmd/JSON.md: its arguments and result
// fields, each path mapped to whether it is "omitted when …".
type docTool struct {
	args, fields map[string]bool
}

var mcpDocRow = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]+) \\|")

// readMCPDoc parses the "## MCP tools" part of cmd/JSON.md.
func readMCPDoc(t *testing.T) (tools map[string]docTool, codes []string) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "cmd", "JSON.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type row struct{ path, typ string }
	sections := map[string]map[string][]row{} // name → "argument" or "field" → rows
	var in bool
	var name, table string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## MCP tools"
		case !in:
		case strings.HasPrefix(line, "### "):
			name = strings.TrimPrefix(line, "### ")
			sections[name] = map[string][]row{}
		case strings.HasPrefix(line, "| argument |"), strings.HasPrefix(line, "| field |"), strings.HasPrefix(line, "| code |"):
			table = strings.Fields(line)[1]
		default:
			if m := mcpDocRow.FindStringSubmatch(line); m != nil && name != "" {
				sections[name][table] = append(sections[name][table], row{m[1], strings.TrimSpace(m[2])})
			}
		}
	}
	expand := func(rows []row) map[string]bool {
		out := map[string]bool{}
		for _, r := range rows {
			optional := strings.Contains(r.typ, "omitted when")
			out[r.path] = optional
			typeName, _, _ := strings.Cut(r.typ, ",")
			for _, sub := range sections[strings.TrimSpace(typeName)]["field"] {
				out[r.path+"."+sub.path] = strings.Contains(sub.typ, "omitted when")
			}
		}
		return out
	}
	tools = map[string]docTool{}
	for name, s := range sections {
		if strings.HasPrefix(name, "memory_") {
			tools[name] = docTool{args: expand(s["argument"]), fields: expand(s["field"])}
		}
	}
	for _, r := range sections["Tool error codes"]["code"] {
		codes = append(codes, r.path)
	}
	return tools, codes
}

// schemaPaths flattens a JSON Schema's properties into paths, as the doc
// writes them, each mapped to whether it may be absent.
func schemaPaths(prefix string, s map[string]any, out map[string]bool) {
	props, _ := s["properties"].(map[string]any)
	required, _ := s["required"].([]any)
	for name, p := range props {
		p := p.(map[string]any)
		path := prefix + name
		optional := !slices.Contains(required, any(name))
		if p["type"] == "array" {
			path += "[]"
			p, _ = p["items"].(map[string]any)
		}
		out[path] = optional
		if p != nil && p["type"] == "object" {
			schemaPaths(path+".", p, out)
		}
	}
}

// TestMCPToolsMatchDoc checks cmd/JSON.md's MCP tables against the
// schemas the tools declare, with every scope offered: each argument and
// result field documented, nothing documented that is not declared, and
// every result field the schema requires documented as always present.
func TestMCPToolsMatchDoc(t *testing.T) {
	doc, codes := readMCPDoc(t)
	tk := team.Toolkit{Local: memory.Scoped{Visibility: memory.Visibility{ProjectKey: "/src/app"}}}
	tools := toolbox.MemoryToolsFor(tk, "mcp")
	if len(doc) != len(tools) {
		t.Errorf("JSON.md documents %d MCP tools, the server has %d", len(doc), len(tools))
	}
	for _, tool := range tools {
		d, ok := doc[tool.Name]
		if !ok {
			t.Errorf("JSON.md has no section for %s", tool.Name)
			continue
		}
		for what, pair := range map[string]struct {
			schema json.RawMessage
			doc    map[string]bool
			strict bool
		}{"argument": {tool.Schema, d.args, false}, "field": {tool.Output, d.fields, true}} {
			var s map[string]any
			if err := json.Unmarshal(pair.schema, &s); err != nil {
				t.Fatal(err)
			}
			declared := map[string]bool{}
			schemaPaths("", s, declared)
			for path, optional := range declared {
				docOptional, ok := pair.doc[path]
				switch {
				case !ok:
					t.Errorf("%s: %s %s is declared but not in JSON.md", tool.Name, what, path)
				case pair.strict && !optional && docOptional:
					t.Errorf("%s: field %s is always present, but JSON.md says it may be omitted", tool.Name, path)
				case pair.strict && optional && !docOptional:
					t.Errorf("%s: field %s may be omitted, but JSON.md says nothing of when", tool.Name, path)
				}
			}
			for path := range pair.doc {
				if _, ok := declared[path]; !ok {
					t.Errorf("%s: JSON.md documents %s %s, which the schema does not declare", tool.Name, what, path)
				}
			}
		}
	}
	want := []string{toolbox.CodeInvalidArgs, toolbox.CodeNotFound, toolbox.CodeDerived, toolbox.CodeSecret, "tool_failed"}
	slices.Sort(want)
	slices.Sort(codes)
	if !slices.Equal(codes, want) {
		t.Errorf("JSON.md lists tool error codes %v, the memory tools use %v", codes, want)
	}
}

// TestConformanceSkipsAreDocumented: docs/mcp.md's table of the
// conformance scenarios CI skips is the list .ci/conformance reads
// (testdata/conformance/skip.txt), each with the same reason.
func TestConformanceSkipsAreDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "conformance", "skip.txt"))
	if err != nil {
		t.Fatal(err)
	}
	skips := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(reason) == "" {
			t.Errorf("skip.txt: %q needs a tab and the reason", line)
		}
		skips[name] = reason
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "mcp.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\| (.+) \\|$")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		if _, ok := skips[m[1]]; ok || strings.Contains(m[2], "needs") {
			documented[m[1]] = m[2]
		}
	}
	for name, reason := range skips {
		if documented[name] != reason {
			t.Errorf("docs/mcp.md should list the skipped scenario %s with the reason %q, has %q", name, reason, documented[name])
		}
	}
	for name := range documented {
		if _, ok := skips[name]; !ok {
			t.Errorf("docs/mcp.md lists %s as skipped, but skip.txt does not skip it", name)
		}
	}
	if !strings.Contains(string(doc), fmt.Sprintf("%d skipped", len(skips))) {
		t.Errorf("docs/mcp.md should give the skip count, %d", len(skips))
	}
}
