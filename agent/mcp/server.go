// Package mcp serves acolyte's memory tools to other coding agents (Claude
// Code, Codex, Cursor, Gemini CLI) over the Model Context Protocol. The tools
// themselves come from agent/toolbox, so an MCP client sees exactly the
// tools, schemas and errors that acolyte's own agent sees.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

// Instructions is sent to every client at initialize. It explains how to use
// the memory and deliberately carries none of it: memories are found by
// searching, never injected.
const Instructions = "acolyte is this project's searchable long-term memory: rules from AGENTS.md, " +
	"conventions, build and test commands, architecture notes, decisions and the user's preferences, " +
	"none of which is in your context. Call memory_search before guessing about any of these, " +
	"and before changing code whose conventions you have not seen. When you learn a durable fact " +
	"(a command that works, a convention, a decision and its reason), store it with memory_add; " +
	"when a fact changed, correct its memory with memory_update rather than adding a second one, " +
	"and remove memories you find to be wrong with memory_remove. A stale result cites files changed " +
	"since it was written: verify it against the code before relying on it, then fix or remove it."

// SourceMCP marks memories added by MCP clients.
const SourceMCP = "mcp"

// StatusURI is the resource that summarises what the memory holds.
const StatusURI = "acolyte://status"

// Options configures a server. Every field is optional.
type Options struct {
	// Version is reported to clients in serverInfo.
	Version string
	// BeforeCall runs before every tool call and status read. The CLI passes
	// the workspace's freshness check, so that memories pulled into .acolyte/
	// by git in another terminal are searchable without a restart. Its error
	// fails that one call, not the server.
	BeforeCall func(ctx context.Context) error
	// Root and Embedder are reported by the status resource.
	Root     string
	Embedder string
	// Stale marks the stale memory_search results of the toolkit given
	// (Binding.Stale); Open's bindings carry their own.
	Stale memory.StaleFunc
	// Logger receives the SDK's diagnostics; nil discards them.
	Logger *slog.Logger
	// Open, when set, makes each session follow its client's roots: it
	// serves the first root inside a repository (see Host), and chooses
	// again when the client says its roots changed. Leave it nil to serve
	// the toolkit given alone, as `--repo DIR` asks.
	Open Opener
}

// New returns an MCP server serving the memory tools over tk, plus the
// acolyte://status resource. Run it with Server.Run on a transport, e.g.
// Transport(os.Stdin, os.Stdout); NewHost makes one per session instead.
func New(tk memory.Toolkit, opts Options) *sdk.Server {
	return NewHost(tk, opts).Server()
}

// newServer serves tools alone, each as an MCP tool with the same name,
// description and input schema: the tests' way to serve tools of their own.
func newServer(tools []toolbox.Tool, opts Options) (*sdk.Server, *gate) {
	g := newGate(opts.BeforeCall)
	s := sdk.NewServer(implementation(opts), serverOptions(opts))
	addTools(s, g, tools)
	return s, g
}

func implementation(opts Options) *sdk.Implementation {
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	return &sdk.Implementation{Name: "acolyte", Version: version}
}

func serverOptions(opts Options) *sdk.ServerOptions {
	return &sdk.ServerOptions{
		Instructions: Instructions,
		Logger:       opts.Logger,
		// Nothing is ever logged to the client, so do not advertise logging.
		Capabilities:              &sdk.ServerCapabilities{},
		SupportedProtocolVersions: ProtocolVersions(),
	}
}

// addTools serves tools on s through g, replacing any of the same name:
// the SDK then tells the client the list changed.
func addTools(s *sdk.Server, g *gate, tools []toolbox.Tool) {
	for _, t := range tools {
		tool := &sdk.Tool{
			Name:        t.Name,
			Description: t.Description,
			InputSchema: t.Schema,
			Annotations: annotations(t.Name),
		}
		if t.Output != nil { // a nil RawMessage in the interface would be sent as null
			tool.OutputSchema = t.Output
		}
		s.AddTool(tool, g.toolHandler(t))
	}
}

// annotations tell clients which tools only read, so those that ask before
// every write can let searches through without a prompt.
func annotations(name string) *sdk.ToolAnnotations {
	readOnly := name == "memory_search" || name == "memory_list" || name == "memory_get"
	a := &sdk.ToolAnnotations{ReadOnlyHint: readOnly, OpenWorldHint: new(false)}
	if !readOnly {
		// An update overwrites the old text, which is as gone as a removal.
		changes := name == "memory_remove" || name == "memory_update"
		a.DestructiveHint = new(changes)
		a.IdempotentHint = changes
	}
	return a
}

// gate runs calls one at a time, after the freshness hook. Calls are
// serialised because adds and removes rewrite files in .acolyte/ and the
// freshness hook may re-import them; an agent gains nothing from running two
// memory calls at once, and a client that does must not corrupt a file.
type gate struct {
	turn       chan struct{}
	beforeCall func(ctx context.Context) error
}

func newGate(beforeCall func(ctx context.Context) error) *gate {
	return &gate{turn: make(chan struct{}, 1), beforeCall: beforeCall}
}

// enter waits for the gate and refreshes the memories. The caller must call
// leave when enter returns nil.
func (g *gate) enter(ctx context.Context) error {
	select {
	case g.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if g.beforeCall == nil {
		return nil
	}
	if err := g.beforeCall(ctx); err != nil {
		g.leave()
		return fmt.Errorf("could not bring memories up to date with .acolyte/: %w", err)
	}
	return nil
}

func (g *gate) leave() { <-g.turn }

func (g *gate) toolHandler(t toolbox.Tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if err := g.enter(ctx); err != nil {
			return toolError(err), nil
		}
		defer g.leave()
		out, err := callSafely(ctx, t, req.Params.Arguments)
		if err != nil {
			return toolError(err), nil
		}
		return toolResult(out)
	}
}

// callSafely turns a panic in a tool into a tool error: one bad call must
// never take down the server the client started once for its whole session.
func callSafely(ctx context.Context, t toolbox.Tool, args json.RawMessage) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in %s: %v; please report it with this trace:\n%s", t.Name, r, debug.Stack())
		}
	}()
	return t.Call(ctx, args)
}

// toolResult returns out as JSON text, which every client shows the model,
// and also as structured content when it is an object, which the protocol
// requires structured content to be.
func toolResult(out any) (*sdk.CallToolResult, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return toolError(fmt.Errorf("encoding the result: %w", err)), nil
	}
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
	if len(b) > 0 && b[0] == '{' {
		res.StructuredContent = json.RawMessage(b)
	}
	return res, nil
}

// toolError reports err to the model in the toolbox's coded form,
// {"error":{"code":…,"message":…}}, the same shape acolyte's own agent reads.
func toolError(err error) *sdk.CallToolResult {
	b, mErr := json.Marshal(toolbox.AsError(err))
	if mErr != nil {
		b = []byte(err.Error())
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
}
