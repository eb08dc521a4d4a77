package toolbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Error is a tool error with a stable code, so a model (or an MCP client) can
// react to the kind of failure rather than parse prose. It marshals as
// {"error":{"code":"…","message":"…"}}.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Codes a tool error can carry.
const (
	CodeInvalidArgs      = "invalid_arguments"
	CodeOutsideWorkspace = "outside_workspace"
	CodeNotFound         = "not_found"
	CodeBinaryFile       = "binary_file"
	CodeTooLarge         = "too_large"
	CodeNoMatch          = "no_match"
	CodeAmbiguousMatch   = "ambiguous_match"
	CodeDenied           = "denied"
	CodeUnknownTool      = "unknown_tool"
)

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// MarshalJSON wraps the error in an "error" object, the shape tool results use.
func (e *Error) MarshalJSON() ([]byte, error) {
	type plain Error
	return json.Marshal(struct {
		Error plain `json:"error"`
	}{plain(*e)})
}

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError turns any error a tool returned into a coded Error, keeping the
// code of an Error found in the chain and calling everything else
// "tool_failed".
func AsError(err error) *Error {
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	return &Error{Code: "tool_failed", Message: err.Error()}
}

// decodeArgs parses a tool's arguments strictly: a misspelt field is an
// error the model can fix, not a silently ignored option.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := err.Error()
		msg = strings.TrimPrefix(msg, "json: ")
		return errorf(CodeInvalidArgs, "arguments do not match the schema: %s", msg)
	}
	return nil
}
