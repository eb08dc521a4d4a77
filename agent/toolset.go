package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
)

// LoadToolsName is the tool that shows deferred tools on demand, and
// CallToolName the one that runs them.
const (
	LoadToolsName = "load_tools"
	CallToolName  = "call_tool"
)

// Toolset holds every tool the agent can run and which of them are declared
// to the model. Deferred tools cost one summary line until the model loads
// them, which keeps the first request small.
//
// The declarations never change during a session, because providers cache
// the prompt by prefix, and they lay it out as system prompt, tool
// declarations, conversation. Declaring a loaded tool in the tools field
// changes a byte before the whole conversation, so the next request pays
// full price for all of it again: measured with the fake servers
// (TestLoadToolsKeepsThePromptCache), loading run_shell at step 5 cut the
// reusable prefix of the next request from 15.5 KB to 3.3 KB (the system
// prompt and core tools). Instead, load_tools declares loaded tools at the
// end of the conversation, as its result, and call_tool runs them: what
// the model has seen stays byte-identical and only grows. The price is one
// level of indirection for deferred tools, which the loop unwraps (see
// Unwrap) so events and the screen name the real tool. Reloading them as
// native declarations once per task was rejected: a chat's next task still
// carries the conversation, so it would lose the cache all the same.
type Toolset struct {
	byName   map[string]toolbox.Tool
	declared []string // in declaration order
	isDecl   map[string]bool
	deferred []string // in the order load_tools lists them
}

// NewToolset declares core from the first request on and defers the rest
// behind load_tools and call_tool.
func NewToolset(core, deferred []toolbox.Tool) (*Toolset, error) {
	ts := &Toolset{byName: map[string]toolbox.Tool{}, isDecl: map[string]bool{}}
	for _, t := range append(append([]toolbox.Tool{}, core...), deferred...) {
		if _, dup := ts.byName[t.Name]; dup || t.Name == LoadToolsName || t.Name == CallToolName {
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
		ts.byName[CallToolName] = ts.callTool()
		ts.declare(CallToolName)
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

// Declarations returns the tools declared to the model: the same list,
// byte for byte, for every request of a session.
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
		if name != LoadToolsName && name != CallToolName {
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
	return ToolDecl{Name: t.Name, Description: t.Description, Schema: declaredSchema(t.Schema)}
}

// undeclared are the schema keywords left out of what the model is sent:
// limits a model almost never reaches, which the tool checks itself and
// explains in its error (a 9 KB query, an eleventh query). Every declared
// byte is paid on each request; types, enums, required fields and the
// maximum of a limit the model chooses stay.
var undeclared = []string{"maxLength", "maxItems", "minimum"}

func hasUndeclared(schema json.RawMessage) bool {
	for _, k := range undeclared {
		if bytes.Contains(schema, []byte(`"`+k+`"`)) {
			return true
		}
	}
	return false
}

// declaredSchema is schema without the undeclared keywords, at any depth.
func declaredSchema(schema json.RawMessage) json.RawMessage {
	if !hasUndeclared(schema) {
		return schema // as written, properties in their order
	}
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return schema
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range undeclared {
				if _, isNum := v[k].(float64); isNum {
					delete(v, k)
				}
			}
			for _, c := range v {
				strip(c)
			}
		case []any:
			for _, c := range v {
				strip(c)
			}
		}
	}
	strip(v)
	b, err := json.Marshal(v)
	if err != nil {
		return schema
	}
	return b
}

// ToolsLoaded is the result of load_tools: the loaded tools' declarations,
// which enter the conversation where a prefix cache does not mind them.
type ToolsLoaded struct {
	Loaded  []string   `json:"loaded"`
	Unknown []string   `json:"unknown,omitempty"`
	Tools   []ToolDecl `json:"tools"`
	How     string     `json:"how"`
}

// callArgs are call_tool's arguments.
type callArgs struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Unwrap returns the tool a call_tool call runs and its arguments; ok is
// false when raw does not name a tool call_tool can run.
func (ts *Toolset) Unwrap(raw json.RawMessage) (name string, args json.RawMessage, ok bool) {
	var a callArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", nil, false
	}
	name = strings.TrimSpace(a.Name)
	if _, known := ts.byName[name]; !known || name == LoadToolsName || name == CallToolName {
		return "", nil, false
	}
	args = a.Args
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	return name, args, true
}

func (ts *Toolset) callTool() toolbox.Tool {
	return toolbox.Tool{
		Name:        CallToolName,
		Summary:     "run a loaded tool",
		Description: "Run a loaded tool.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"args":{"type":"object"}},"required":["name","args"]}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			name, args, ok := ts.Unwrap(raw)
			if !ok {
				return nil, &toolbox.Error{Code: toolbox.CodeInvalidArgs, Message: fmt.Sprintf("give name, one of %s, and args, an object of its parameters", strings.Join(ts.deferred, ", "))}
			}
			return ts.byName[name].Call(ctx, args)
		},
	}
}

func (ts *Toolset) loadTool() toolbox.Tool {
	var list []string
	for _, name := range ts.deferred {
		list = append(list, fmt.Sprintf("%s (%s)", name, ts.byName[name].Summary))
	}
	return toolbox.Tool{
		Name:        LoadToolsName,
		Summary:     "declare more tools",
		Description: "Load tools to run with call_tool: " + strings.Join(list, ", ") + ".",
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
			out := ToolsLoaded{Loaded: []string{}, How: `run them with call_tool {"name": tool, "args": {its parameters}}`}
			for _, name := range a.Names {
				name = strings.TrimSpace(name)
				if t, ok := ts.byName[name]; ok && name != LoadToolsName && name != CallToolName {
					out.Loaded = append(out.Loaded, name)
					out.Tools = append(out.Tools, declOf(t))
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
