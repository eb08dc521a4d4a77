package toolbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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
		return errorf(CodeInvalidArgs, "arguments do not match the schema: %s", plainDecodeError(err))
	}
	return nil
}

// plainDecodeError says what was wrong with the arguments in the model's
// terms, JSON types and field names, never Go's type names.
func plainDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Sprintf("the arguments must be a JSON object, not a JSON %s", te.Value)
		}
		return fmt.Sprintf("field %q must be %s, not a JSON %s", te.Field, Kind(te.Type), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("the arguments are not valid JSON (at byte %d)", se.Offset)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field ") {
		return msg + "; use only the fields in the tool's schema"
	}
	return msg
}

// plural is the plural of a kind: "a list of whole numbers", "a list of
// lists of strings", "a list of true or false values".
func plural(kind string) string {
	kind = strings.TrimPrefix(strings.TrimPrefix(kind, "a "), "an ")
	if kind == "true or false" {
		return "true or false values"
	}
	if rest, ok := strings.CutPrefix(kind, "list of "); ok {
		return "lists of " + rest
	}
	return kind + "s"
}

// Kind names a Go type as the JSON a model should send for it.
func Kind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(json.RawMessage(nil)) {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list of " + plural(Kind(t.Elem()))
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value"
}
