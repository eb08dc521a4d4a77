package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
)

// LoadToolsName is the tool that declares deferred tools on demand.
const LoadToolsName = "load_tools"

// Toolset holds every tool the agent can run and which of them are declared
// to the model. Deferred tools cost one summary line until the model loads
// them, which keeps the first request small.
type Toolset struct {
	byName   map[string]toolbox.Tool
	declared []string // in declaration order
	isDecl   map[string]bool
	deferred []string // in the order load_tools lists them
}

// NewToolset declares core from the first request on and defers the rest
// behind load_tools.
func NewToolset(core, deferred []toolbox.Tool) (*Toolset, error) {
	ts := &Toolset{byName: map[string]toolbox.Tool{}, isDecl: map[string]bool{}}
	for _, t := range append(append([]toolbox.Tool{}, core...), deferred...) {
		if _, dup := ts.byName[t.Name]; dup || t.Name == LoadToolsName {
			return nil, fmt.Errorf("tool %q is defined twice", t.Name)
		}
		ts.byName[t.Name] = t
	}
	for _, t := range core {
		ts.declare(t.Name)
	}
	for _, t := range deferred {
		ts.deferred = append(ts.deferred, t.Name)
	}
	if len(deferred) > 0 {
		ts.byName[LoadToolsName] = ts.loadTool()
		ts.declare(LoadToolsName)
	}
	return ts, nil
}

func (ts *Toolset) declare(name string) {
	if !ts.isDecl[name] {
		ts.isDecl[name] = true
		ts.declared = append(ts.declared, name)
	}
}

// Tool returns a tool by name, declared or not: a model that guesses a
// deferred tool's arguments right may call it without loading it.
func (ts *Toolset) Tool(name string) (toolbox.Tool, bool) {
	t, ok := ts.byName[name]
	return t, ok
}

// Declarations returns the tools currently declared to the model.
func (ts *Toolset) Declarations() []ToolDecl {
	decls := make([]ToolDecl, 0, len(ts.declared))
	for _, name := range ts.declared {
		decls = append(decls, declOf(ts.byName[name]))
	}
	return decls
}

// AllDeclarations returns every tool as if all were loaded, for comparison.
func (ts *Toolset) AllDeclarations() []ToolDecl {
	var decls []ToolDecl
	for _, name := range ts.declared {
		if name != LoadToolsName {
			decls = append(decls, declOf(ts.byName[name]))
		}
	}
	for _, name := range ts.deferred {
		if !ts.isDecl[name] {
			decls = append(decls, declOf(ts.byName[name]))
		}
	}
	return decls
}

func declOf(t toolbox.Tool) ToolDecl {
	return ToolDecl{Name: t.Name, Description: t.Description, Schema: t.Schema}
}

// ToolsLoaded is the result of load_tools.
type ToolsLoaded struct {
	Loaded  []string `json:"loaded"`
	Unknown []string `json:"unknown,omitempty"`
}

func (ts *Toolset) loadTool() toolbox.Tool {
	var list strings.Builder
	for _, name := range ts.deferred {
		fmt.Fprintf(&list, "\n- %s: %s", name, ts.byName[name].Summary)
	}
	return toolbox.Tool{
		Name:        LoadToolsName,
		Summary:     "declare more tools",
		Description: "Load tools by name for your next step:" + list.String(),
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "names": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["names"]
}`),
		Call: func(_ context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Names []string `json:"names"`
			}
			if err := json.Unmarshal(raw, &a); err != nil || len(a.Names) == 0 {
				return nil, &toolbox.Error{Code: toolbox.CodeInvalidArgs, Message: "give names: a list of tool names to load"}
			}
			out := ToolsLoaded{Loaded: []string{}}
			for _, name := range a.Names {
				name = strings.TrimSpace(name)
				if _, ok := ts.byName[name]; ok && name != LoadToolsName {
					ts.declare(name)
					out.Loaded = append(out.Loaded, name)
				} else {
					out.Unknown = append(out.Unknown, name)
				}
			}
			if len(out.Loaded) == 0 {
				return nil, &toolbox.Error{Code: toolbox.CodeUnknownTool, Message: fmt.Sprintf("no such tools: %s; choose from %s", strings.Join(out.Unknown, ", "), strings.Join(ts.deferred, ", "))}
			}
			return out, nil
		},
	}
}
