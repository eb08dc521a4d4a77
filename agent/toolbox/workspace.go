package toolbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits that keep one tool result small enough to leave room for thinking.
const (
	maxFileBytes      = 4 << 20  // files larger than this are not read at all
	maxReadChars      = 64 << 10 // text returned by one read_file call
	maxListed         = 500
	defaultMatches    = 50
	maxMatches        = 200
	maxMatchLineChars = 200
	sniffBytes        = 8000
)

// Workspace is the directory tree the workspace tools may touch. Every path
// a model gives is resolved inside Root, symlinks included, so a tool can
// never read or write outside it.
type Workspace struct {
	// Root is absolute with every symlink resolved, so that containment can
	// be checked by comparing resolved paths.
	Root string
	// Confirm decides whether run_shell may run a command. Nil refuses every
	// command: running programs needs someone's consent.
	Confirm func(command string) bool
	// ShellTimeout is the default and maximum run time of one command.
	ShellTimeout time.Duration
}

// NewWorkspace roots the workspace tools at dir.
func NewWorkspace(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", dir, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace root %s is not a directory", dir)
	}
	return &Workspace{Root: real, ShellTimeout: 2 * time.Minute}, nil
}

// Resolve maps a path the model gave (relative to Root, or absolute) to a
// real path inside Root. The deepest existing ancestor is resolved with
// EvalSymlinks, so a symlink anywhere on the way that points outside is
// caught; the part that does not exist yet cannot contain symlinks.
func (w *Workspace) Resolve(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errorf(CodeInvalidArgs, "give a path relative to the workspace root")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", errorf(CodeInvalidArgs, "path contains a NUL byte")
	}
	joined := p
	if !filepath.IsAbs(p) {
		joined = filepath.Join(w.Root, p)
	}
	joined = filepath.Clean(joined)

	existing, rest := joined, ""
	var real string
	for {
		r, err := filepath.EvalSymlinks(existing)
		if err == nil {
			real = r
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("resolve %s: %w", p, err)
		}
		if _, lerr := os.Lstat(existing); lerr == nil {
			// The name exists but its target does not: a dangling symlink,
			// which a write would follow to wherever it points.
			return "", errorf(CodeOutsideWorkspace, "%s is a symlink to a missing target; refusing to follow it", p)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return "", fmt.Errorf("resolve %s: no existing ancestor", p)
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	resolved := filepath.Join(real, rest)
	if !w.contains(resolved) {
		return "", errorf(CodeOutsideWorkspace, "%s is outside the workspace %s; use a path inside it", p, w.Root)
	}
	return resolved, nil
}

func (w *Workspace) contains(real string) bool {
	rel, err := filepath.Rel(w.Root, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// rel is the path shown to the model: relative to Root, with slashes.
func (w *Workspace) rel(real string) string {
	r, err := filepath.Rel(w.Root, real)
	if err != nil {
		return real
	}
	return filepath.ToSlash(r)
}

// Tools returns the workspace tools: read_file, list_files, search_code,
// edit_file, write_file and run_shell.
func (w *Workspace) Tools() []Tool {
	return []Tool{w.readFile(), w.listFiles(), w.searchCode(), w.editFile(), w.writeFile(), w.runShell()}
}

// FileContent is the result of read_file.
type FileContent struct {
	Path       string `json:"path"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
	Content    string `json:"content"`
	// NextLine is set when the content was cut short: read on from there.
	NextLine int `json:"next_line,omitempty"`
}

func (w *Workspace) readFile() Tool {
	return Tool{
		Name:        "read_file",
		Summary:     "read a text file, optionally a line range",
		Description: "Read a text file. Long files come in parts: continue from next_line.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string"},
    "start_line": {"type": "integer"},
    "end_line": {"type": "integer"}
  },
  "required": ["path"]
}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Path      string `json:"path"`
				StartLine int    `json:"start_line"`
				EndLine   int    `json:"end_line"`
			}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			real, err := w.Resolve(a.Path)
			if err != nil {
				return nil, err
			}
			data, err := w.readText(real, a.Path)
			if err != nil {
				return nil, err
			}
			lines := strings.SplitAfter(string(data), "\n")
			if lines[len(lines)-1] == "" {
				lines = lines[:len(lines)-1]
			}
			start, end := max(a.StartLine, 1), a.EndLine
			if end == 0 || end > len(lines) {
				end = len(lines)
			}
			if start > len(lines) && len(lines) > 0 {
				return nil, errorf(CodeInvalidArgs, "start_line %d is past the end: %s has %d lines", start, a.Path, len(lines))
			}
			if end < start && len(lines) > 0 {
				return nil, errorf(CodeInvalidArgs, "end_line %d is before start_line %d", end, start)
			}
			out := FileContent{Path: w.rel(real), StartLine: start, TotalLines: len(lines)}
			var b strings.Builder
			n := start
			for ; n <= end; n++ {
				line := lines[n-1]
				if b.Len() > 0 && b.Len()+len(line) > maxReadChars {
					out.NextLine = n
					break
				}
				b.WriteString(line)
			}
			out.EndLine = n - 1
			out.Content = b.String()
			return out, nil
		},
	}
}

// readText reads a file the tools may show as text: regular, not too large,
// no NUL bytes and valid UTF-8.
func (w *Workspace) readText(real, shown string) ([]byte, error) {
	st, err := os.Stat(real)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errorf(CodeNotFound, "%s does not exist; list_files shows what does", shown)
	}
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, errorf(CodeInvalidArgs, "%s is a directory; use list_files", shown)
	}
	if st.Size() > maxFileBytes {
		return nil, errorf(CodeTooLarge, "%s is %d bytes, over the %d byte limit; use search_code to find the part you need", shown, st.Size(), maxFileBytes)
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return nil, err
	}
	if isBinary(data) {
		return nil, errorf(CodeBinaryFile, "%s is a binary file and cannot be shown as text", shown)
	}
	return data, nil
}

func isBinary(data []byte) bool {
	sniff := data[:min(len(data), sniffBytes)]
	if bytes.IndexByte(sniff, 0) >= 0 {
		return true
	}
	return !utf8.Valid(data)
}

// FileList is the result of list_files.
type FileList struct {
	Files     []string `json:"files"`
	Truncated bool     `json:"truncated,omitempty"`
}

func (w *Workspace) listFiles() Tool {
	return Tool{
		Name:        "list_files",
		Summary:     "list workspace files matching a glob",
		Description: "List files matching a glob; ** spans directories.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "e.g. **/*.go"}
  }
}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Pattern string `json:"pattern"`
			}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			pattern, err := cleanGlob(a.Pattern)
			if err != nil {
				return nil, err
			}
			out := FileList{Files: []string{}}
			err = w.walk(ctx, func(rel string) bool {
				if !globMatch(pattern, rel) {
					return true
				}
				if len(out.Files) == maxListed {
					out.Truncated = true
					return false
				}
				out.Files = append(out.Files, rel)
				return true
			})
			return out, err
		},
	}
}

func cleanGlob(p string) (string, error) {
	p = strings.TrimPrefix(filepath.ToSlash(strings.TrimSpace(p)), "./")
	if p == "" {
		return "**", nil
	}
	if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") {
		return "", errorf(CodeOutsideWorkspace, "pattern %q leaves the workspace; patterns are relative to its root", p)
	}
	if _, err := path.Match(strings.ReplaceAll(p, "**", "*"), ""); err != nil {
		return "", errorf(CodeInvalidArgs, "bad glob %q: %v", p, err)
	}
	return p, nil
}

// globMatch matches a slash-separated path against a glob in which a "**"
// segment stands for zero or more directories.
func globMatch(pattern, name string) bool {
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// walk visits every regular file under Root in lexical order, skipping .git
// and not following symlinks, until visit returns false.
func (w *Workspace) walk(ctx context.Context, visit func(rel string) bool) error {
	stop := errors.New("stop")
	err := filepath.WalkDir(w.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == w.Root {
				return err
			}
			return nil // an unreadable corner does not spoil the listing
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if !visit(w.rel(p)) {
			return stop
		}
		return nil
	})
	if errors.Is(err, stop) {
		return nil
	}
	return err
}

// CodeMatch is one line found by search_code.
type CodeMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// CodeMatches is the result of search_code.
type CodeMatches struct {
	Matches   []CodeMatch `json:"matches"`
	Truncated bool        `json:"truncated,omitempty"`
}

func (w *Workspace) searchCode() Tool {
	return Tool{
		Name:        "search_code",
		Summary:     "regexp search over the workspace's text files",
		Description: "Search text files line by line for a Go regexp.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string"},
    "glob": {"type": "string", "description": "e.g. **/*_test.go"},
    "max_results": {"type": "integer", "description": "Default 50."}
  },
  "required": ["pattern"]
}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Pattern    string `json:"pattern"`
				Glob       string `json:"glob"`
				MaxResults int    `json:"max_results"`
			}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			if a.Pattern == "" {
				return nil, errorf(CodeInvalidArgs, "give a pattern to search for")
			}
			re, err := regexp.Compile(a.Pattern)
			if err != nil {
				return nil, errorf(CodeInvalidArgs, "bad regular expression: %v", err)
			}
			glob, err := cleanGlob(a.Glob)
			if err != nil {
				return nil, err
			}
			limit := defaultMatches
			if a.MaxResults > 0 {
				limit = min(a.MaxResults, maxMatches)
			}
			out := CodeMatches{Matches: []CodeMatch{}}
			err = w.walk(ctx, func(rel string) bool {
				if !globMatch(glob, rel) {
					return true
				}
				data, err := w.readText(filepath.Join(w.Root, filepath.FromSlash(rel)), rel)
				if err != nil {
					return true // binary or huge files are not code to search
				}
				for i, line := range strings.Split(string(data), "\n") {
					if !re.MatchString(line) {
						continue
					}
					if len(out.Matches) == limit {
						out.Truncated = true
						return false
					}
					out.Matches = append(out.Matches, CodeMatch{Path: rel, Line: i + 1, Text: clip(strings.TrimRight(line, "\r"), maxMatchLineChars)})
				}
				return true
			})
			return out, err
		},
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// FileWritten is the result of edit_file and write_file.
type FileWritten struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created,omitempty"`
}

func (w *Workspace) editFile() Tool {
	return Tool{
		Name:    "edit_file",
		Summary: "exact-match edit, or create a file",
		Description: "Replace old with new in a file. old must match the file's text exactly (whitespace included) " +
			"and exactly once: include surrounding lines to make it unique. With old empty, create a new file " +
			"whose content is new.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path relative to the workspace root."},
    "old": {"type": "string", "description": "Exact text to replace; empty to create the file."},
    "new": {"type": "string", "description": "Replacement text."}
  },
  "required": ["path", "old", "new"]
}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Path string `json:"path"`
				Old  string `json:"old"`
				New  string `json:"new"`
			}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			real, err := w.Resolve(a.Path)
			if err != nil {
				return nil, err
			}
			if a.Old == "" {
				if _, err := os.Lstat(real); err == nil {
					return nil, errorf(CodeInvalidArgs, "%s already exists; give old text to replace, or use write_file to overwrite it", a.Path)
				}
				return w.write(real, []byte(a.New), 0o644, true)
			}
			data, err := w.readText(real, a.Path)
			if err != nil {
				return nil, err
			}
			switch n := strings.Count(string(data), a.Old); {
			case n == 0:
				return nil, errorf(CodeNoMatch, "old text not found in %s; read the file and copy the text exactly", a.Path)
			case n > 1:
				return nil, errorf(CodeAmbiguousMatch, "old text occurs %d times in %s; include more surrounding lines so it matches once", n, a.Path)
			}
			st, err := os.Stat(real)
			if err != nil {
				return nil, err
			}
			return w.write(real, []byte(strings.Replace(string(data), a.Old, a.New, 1)), st.Mode().Perm(), false)
		},
	}
}

func (w *Workspace) writeFile() Tool {
	return Tool{
		Name:        "write_file",
		Summary:     "write a whole file",
		Description: "Write content to a file, creating it and its directories or replacing it entirely. Prefer edit_file for changes to an existing file.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path relative to the workspace root."},
    "content": {"type": "string", "description": "The whole new content."}
  },
  "required": ["path", "content"]
}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Path    string `json:"path"`
				Content string `json:"content"`
			}
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			real, err := w.Resolve(a.Path)
			if err != nil {
				return nil, err
			}
			mode, created := fs.FileMode(0o644), true
			if st, err := os.Stat(real); err == nil {
				if st.IsDir() {
					return nil, errorf(CodeInvalidArgs, "%s is a directory", a.Path)
				}
				mode, created = st.Mode().Perm(), false
			}
			return w.write(real, []byte(a.Content), mode, created)
		},
	}
}

// write replaces a file through a temporary file and a rename, so that a
// crash mid-write never leaves a half-written source file behind.
func (w *Workspace) write(real string, data []byte, mode fs.FileMode, created bool) (FileWritten, error) {
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		return FileWritten{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(real), "."+filepath.Base(real)+".tmp*")
	if err != nil {
		return FileWritten{}, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return FileWritten{}, err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return FileWritten{}, err
	}
	if err := tmp.Close(); err != nil {
		return FileWritten{}, err
	}
	if err := os.Rename(tmp.Name(), real); err != nil {
		return FileWritten{}, err
	}
	return FileWritten{Path: w.rel(real), Bytes: len(data), Created: created}, nil
}
