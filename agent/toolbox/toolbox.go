// Package toolbox defines the tools a model can call: the memory toolkit and
// the workspace tools. The agent loop and the MCP server both serve tools
// from here, so a tool's name, schema and behaviour are defined once.
package toolbox

import (
	"context"
	"encoding/json"
)

// Tool is one callable tool.
type Tool struct {
	Name string
	// Summary is the one line shown for a deferred tool before its schema is loaded.
	Summary     string
	Description string
	// Schema is the JSON Schema of the arguments object.
	Schema json.RawMessage
	// Output, when set, is the JSON Schema of the object Call returns, which
	// MCP clients read as the tool's outputSchema.
	Output json.RawMessage
	// Call runs the tool. A returned error is a tool error the model can read
	// and recover from, never a reason to stop the loop.
	Call func(ctx context.Context, args json.RawMessage) (any, error)
	// shrink is the tool's own way to cut its result to a size (see
	// Tool.Shrink); ok is false when it cannot.
	shrink func(result json.RawMessage, max int) (out json.RawMessage, ok bool)
}
