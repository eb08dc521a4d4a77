package toolbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acolyte-dev/acolyte/internal/atomicfile"
)

// Limits that keep one tool result small enough to leave room for thinking.
// Every one counts bytes: a file or an output of one long line is capped
// like any other.
const (
	maxReadBytes      = 64 << 10 // content returned by one read_file call
	maxEditBytes      = 4 << 20  // edit_file reads and rewrites whole files up to this
	maxSearchBytes    = 64 << 20 // search_code skips larger files, and says so
	maxSearchLine     = 1 << 20  // search_code matches a longer line on its first MiB
	maxResultBytes    = 64 << 10 // paths or matches in one list_files or search_code result
	maxListed         = 500
	defaultMatches    = 50
	maxMatches        = 200
	maxMatchLineChars = 200
	maxSkippedListed  = 20
	sniffBytes        = 8000
)

// Sandbox is the directory tree the workspace tools may touch. Every
// access goes through an *os.Root opened on Root, so no tool can read or
// write outside it, even while symlinks are swapped in under it; none may
// touch a git directory, make one, or write .acolyte/ or a path git runs
// or obeys (Trust); and none may add merge, filter or diff drivers to a
// .gitattributes or repoint a submodule.
type Sandbox struct {
	// Root is absolute with every symlink resolved, so that absolute paths
	// and symlink targets can be mapped inside it by comparing paths.
	Root string
	// Confirm decides whether run_shell may run a command. Nil refuses every
	// command: running programs needs someone's consent.
	Confirm func(command string) bool
	// ShellTimeout is the default and maximum run time of one command.
	ShellTimeout time.Duration
	// Trust reports the paths git runs or obeys in this checkout, as git
	// itself reports them (cmd hands in gitsync's Repo.Trusted, gitsync
	// being the package that knows git): hooks folders from every config
	// source, husky's hook scripts, every file a config includes. The tools
	// may read them but not write them, for the reason .git/ is out of
	// bounds: what is written there runs on the user's next git command
	// without the consent run_shell asks for. It is asked on every write,
	// so a config the user changes mid-session counts at once; an error
	// refuses the write. It is asked about the root and about every
	// repository nested on the way to the written path (worktree is the
	// top of its working tree, absolute); it returns nothing for a
	// directory in no repository. Nil trusts nothing.
	Trust func(ctx context.Context, worktree string) ([]Trusted, error)
}

// Trusted is one path git runs or obeys.
type Trusted struct {
	// Path is absolute; it need not exist yet.
	Path string
	// Dir means every file under Path.
	Dir bool
	// Why says what git does with it, as the refusal tells the model.
	Why string
}

// NewSandbox roots the workspace tools at dir.
func NewSandbox(dir string) (*Sandbox, error) {
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
	return &Sandbox{Root: real, ShellTimeout: 2 * time.Minute}, nil
}

// Tools returns the workspace tools: read_file, list_files, search_code,
// edit_file, write_file and run_shell.
func (w *Sandbox) Tools() []Tool {
	return []Tool{w.readFile(), w.listFiles(), w.searchCode(), w.editFile(), w.writeFile(), w.runShell()}
}

// FileContent is the result of read_file.
type FileContent struct {
	Path       string `json:"path"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
	Content    string `json:"content"`
	// Offset is the byte offset in the file where Content starts.
	Offset int64 `json:"offset,omitempty"`
	// NextLine is set when the content was cut short at a line's end: read
	// on with start_line.
	NextLine int `json:"next_line,omitempty"`
	// NextOffset is set when the content was cut inside a line too long for
	// one result, or was read by offset: read on with offset.
	NextOffset int64 `json:"next_offset,omitempty"`
	// Note says how the content was cut and how to read on.
	Note string `json:"note,omitempty"`
}

type readArgs struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Offset    *int64 `json:"offset"`
}

func (w *Sandbox) readFile() Tool {
	return Tool{
		Name:    "read_file",
		Summary: "read a text file, optionally a line range",
		// The prompt's budget leaves no room to explain offset: the name, the
		// next_offset it comes from and the note of a cut result do.
		Description: "Read a text file in parts: continue from next_line or next_offset.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string"},
    "start_line": {"type": "integer"},
    "end_line": {"type": "integer"},
    "offset": {"type": "integer"}
  },
  "required": ["path"]
}`),
		Call: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a readArgs
			if err := decodeArgs(raw, &a); err != nil {
				return nil, err
			}
			switch {
			case a.Offset != nil && (a.StartLine != 0 || a.EndLine != 0):
				return nil, errorf(CodeInvalidArgs, "give either offset or start_line/end_line, not both")
			case a.Offset != nil && *a.Offset < 0:
				return nil, errorf(CodeInvalidArgs, "offset %d is negative", *a.Offset)
			case a.StartLine < 0 || a.EndLine < 0:
				return nil, errorf(CodeInvalidArgs, "line numbers start at 1")
			}
			root, err := w.openRoot()
			if err != nil {
				return nil, err
			}
			defer root.Close()
			rel, err := w.resolve(ctx, root, a.Path, readAccess)
			if err != nil {
				return nil, err
			}
			f, _, err := openRegular(root, rel, a.Path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			out, err := readPart(f, a, maxReadBytes)
			if err != nil {
				return nil, err
			}
			out.Path = filepath.ToSlash(rel)
			return out, nil
		},
		shrink: shrinkFileContent,
	}
}

// fileScan is what one pass over a file learns: its size and line count,
// and the byte offsets where the wanted part starts and ends.
type fileScan struct {
	size     int64
	lines    int
	startOff int64 // where start_line begins
	endOff   int64 // just past end_line
	before   int   // newlines before offset
	binary   bool
}

// scanFile streams f once from its start, wherever its offset is, so a file
// of any size costs one buffer.
func scanFile(f *os.File, start, end int, offset int64) (fileScan, error) {
	s := fileScan{endOff: -1}
	r := io.NewSectionReader(f, 0, math.MaxInt64)
	buf := make([]byte, 64<<10)
	var pos int64
	var last byte
	for {
		n, err := r.Read(buf)
		chunk := buf[:n]
		if pos < sniffBytes && bytes.IndexByte(chunk[:min(int64(n), sniffBytes-pos)], 0) >= 0 {
			s.binary = true
			return s, nil
		}
		for i := 0; i < n; {
			j := bytes.IndexByte(chunk[i:], '\n')
			if j < 0 {
				break
			}
			off := pos + int64(i+j)
			if off < offset {
				s.before++
			}
			s.lines++
			if s.lines == start-1 {
				s.startOff = off + 1
			}
			if s.lines == end {
				s.endOff = off + 1
			}
			i += j + 1
		}
		if n > 0 {
			last = chunk[n-1]
		}
		pos += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return s, err
		}
	}
	s.size = pos
	if s.size > 0 && last != '\n' {
		s.lines++
	}
	if s.endOff < 0 {
		s.endOff = s.size
	}
	return s, nil
}

// readPart reads the part of f that a asks for, at most limit bytes, cut
// at a line's end when one fits and never inside a UTF-8 character.
func readPart(f *os.File, a readArgs, limit int) (FileContent, error) {
	start, end := max(a.StartLine, 1), a.EndLine
	var offset int64 = -1
	if a.Offset != nil {
		offset = *a.Offset
	}
	s, err := scanFile(f, start, end, offset)
	if err != nil {
		return FileContent{}, err
	}
	if s.binary {
		return FileContent{}, errorf(CodeBinaryFile, "%s is a binary file and cannot be shown as text", shown(a.Path))
	}
	out := FileContent{TotalLines: s.lines}
	var from, to int64
	if offset >= 0 {
		if offset > s.size || offset == s.size && s.size > 0 {
			return FileContent{}, errorf(CodeInvalidArgs, "offset %d is past the end: %s has %d bytes", offset, shown(a.Path), s.size)
		}
		from, to = offset, s.size
		out.StartLine = s.before + 1
	} else {
		if start > s.lines && s.lines > 0 {
			return FileContent{}, errorf(CodeInvalidArgs, "start_line %d is past the end: %s has %d lines", start, shown(a.Path), s.lines)
		}
		if end != 0 && end < start {
			return FileContent{}, errorf(CodeInvalidArgs, "end_line %d is before start_line %d", end, start)
		}
		from, to = s.startOff, s.endOff
		out.StartLine = start
	}
	// UTFMax spare bytes let the cut and, by offset, the start move to a
	// character boundary.
	buf := make([]byte, min(to-from, int64(limit)+utf8.UTFMax))
	n, err := f.ReadAt(buf, from)
	if err != nil && err != io.EOF {
		return FileContent{}, err
	}
	buf = buf[:n]
	if offset >= 0 {
		skip := 0
		for skip < len(buf) && skip < utf8.UTFMax && !utf8.RuneStart(buf[skip]) {
			skip++
		}
		buf, from = buf[skip:], from+int64(skip)
	}
	cut := len(buf)
	if from+int64(cut) > to {
		cut = int(to - from)
	}
	if cut > limit {
		cut = limit
		nl := bytes.LastIndexByte(buf[:cut], '\n')
		if offset < 0 && nl >= 0 {
			cut = nl + 1
			out.NextLine = start + bytes.Count(buf[:cut], []byte("\n"))
			out.Note = fmt.Sprintf("cut at %d bytes; call read_file with start_line %d to read on", cut, out.NextLine)
		} else {
			for cut > 0 && !utf8.RuneStart(buf[cut]) {
				cut--
			}
			out.NextOffset = from + int64(cut)
			why := "inside a line longer than that"
			if offset >= 0 {
				why = "as asked by offset"
			}
			out.Note = fmt.Sprintf("cut at %d bytes, %s; call read_file with offset %d to read on", cut, why, out.NextOffset)
		}
	} else if offset >= 0 && from+int64(cut) < s.size {
		out.NextOffset = from + int64(cut)
		out.Note = fmt.Sprintf("read %d bytes; call read_file with offset %d to read on", cut, out.NextOffset)
	}
	out.Offset = from
	content := buf[:cut]
	if !utf8.Valid(content) || bytes.IndexByte(content, 0) >= 0 {
		return FileContent{}, errorf(CodeBinaryFile, "%s is not UTF-8 text and cannot be shown", shown(a.Path))
	}
	out.Content = string(content)
	out.EndLine = out.StartLine - 1
	if len(content) > 0 {
		out.EndLine = out.StartLine + bytes.Count(content[:len(content)-1], []byte("\n"))
	}
	return out, nil
}

// readWhole reads a file for edit_file, which rewrites it whole.
func readWhole(root *os.Root, rel, p string) ([]byte, fs.FileInfo, error) {
	f, st, err := openRegular(root, rel, p)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if st.Size() > maxEditBytes {
		return nil, nil, errorf(CodeTooLarge, "%s is %d bytes, over edit_file's %d byte limit; edit it with run_shell (e.g. sed) if the user allows", shown(p), st.Size(), maxEditBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEditBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > maxEditBytes {
		return nil, nil, errorf(CodeTooLarge, "%s grew past edit_file's %d byte limit while being read", shown(p), maxEditBytes)
	}
	if isBinary(data) {
		return nil, nil, errorf(CodeBinaryFile, "%s is a binary file and cannot be edited as text", shown(p))
	}
	return data, st, nil
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

func (w *Sandbox) listFiles() Tool {
	return Tool{
		Name:        "list_files",
		Summary:     "list workspace files matching a glob",
		Description: "List files matching a glob such as **/*.go.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string"}
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
			root, err := w.openRoot()
			if err != nil {
				return nil, err
			}
			defer root.Close()
			out := FileList{Files: []string{}}
			size := 0
			err = w.walk(ctx, root, func(rel string) bool {
				if !globMatch(pattern, rel) {
					return true
				}
				if len(out.Files) == maxListed || size+len(rel) > maxResultBytes {
					out.Truncated = true
					return false
				}
				size += len(rel) + 3
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

// matchSegments runs in time proportional to len(pat)·len(name): match[j]
// says whether the pattern so far matches name's first j segments. Trying
// every split for each "**" instead is exponential in the number of "**"s,
// which a pattern from a model must not be able to exploit.
func matchSegments(pat, name []string) bool {
	match := make([]bool, len(name)+1)
	match[0] = true
	for _, p := range pat {
		if p == "**" {
			// Zero or more directories: true from the first reachable j on.
			for j := 1; j <= len(name); j++ {
				match[j] = match[j] || match[j-1]
			}
			continue
		}
		for j := len(name); j >= 1; j-- {
			ok, _ := path.Match(p, name[j-1])
			match[j] = match[j-1] && ok
		}
		match[0] = false
	}
	return match[len(name)]
}

// walk visits every regular file under Root in lexical order, skipping .git

// walk visits every regular file under the root in lexical order, skipping
// git directories and not following symlinks, until visit returns false.
// It reads the tree through root, so a directory swapped for a symlink
// mid-walk cannot lead it outside.
func (w *Sandbox) walk(ctx context.Context, root *os.Root, visit func(rel string) bool) error {
	stop := errors.New("stop")
	gitDirs := w.gitDirs(root, nil)
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // an unreadable corner does not spoil the listing
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if d.IsDir() {
			if p != "." {
				dir := filepath.FromSlash(p)
				if isDotGit(d.Name()) || isGitDir(root, dir) || sameAsAny(root, dir, gitDirs) {
					return fs.SkipDir
				}
			}
			return nil
		}
		if !d.Type().IsRegular() || isDotGit(d.Name()) {
			return nil
		}
		if !visit(p) {
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
	// Skipped lists text files that were not searched, or not all of
	// them, and why, so that no match can be missing without a word.
	Skipped []SkippedFile `json:"skipped,omitempty"`
	// SkippedTotal counts every skipped file when Skipped is cut short.
	SkippedTotal int `json:"skipped_total,omitempty"`
	// BinaryFiles counts matching files not searched because they are binary.
	BinaryFiles int `json:"binary_files,omitempty"`
}

// SkippedFile is a file search_code did not search in full.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (m *CodeMatches) skip(path, reason string) {
	m.SkippedTotal++
	if len(m.Skipped) < maxSkippedListed {
		m.Skipped = append(m.Skipped, SkippedFile{Path: path, Reason: reason})
	}
}

func (w *Sandbox) searchCode() Tool {
	return Tool{
		Name:        "search_code",
		Summary:     "regexp search over the workspace's text files",
		Description: "Search text files line by line for a Go regexp, in the files glob matches.",
		Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string"},
    "glob": {"type": "string"},
    "max_results": {"type": "integer"}
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
			root, err := w.openRoot()
			if err != nil {
				return nil, err
			}
			defer root.Close()
			out := CodeMatches{Matches: []CodeMatch{}}
			size := 0
			err = w.walk(ctx, root, func(rel string) bool {
				if !globMatch(glob, rel) {
					return true
				}
				return searchFile(ctx, root, rel, re, &out, func(m CodeMatch) bool {
					if len(out.Matches) == limit || size+len(m.Path)+len(m.Text) > maxResultBytes {
						out.Truncated = true
						return false
					}
					size += len(m.Path) + len(m.Text) + 32
					out.Matches = append(out.Matches, m)
					return true
				})
			})
			if out.SkippedTotal == len(out.Skipped) {
				out.SkippedTotal = 0
			}
			return out, err
		},
	}
}

// searchFile streams one file line by line, so a file's size costs time,
// not memory. It returns false when add wants no more matches.
func searchFile(ctx context.Context, root *os.Root, rel string, re *regexp.Regexp, out *CodeMatches, add func(CodeMatch) bool) bool {
	f, st, err := openRegular(root, filepath.FromSlash(rel), rel)
	if err != nil {
		out.skip(rel, AsError(err).Message)
		return true
	}
	defer f.Close()
	if st.Size() > maxSearchBytes {
		out.skip(rel, fmt.Sprintf("%d bytes, over search_code's %d byte limit; read_file reads it in parts", st.Size(), maxSearchBytes))
		return true
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(sniffBytes); bytes.IndexByte(head, 0) >= 0 {
		out.BinaryFiles++
		return true
	}
	var line []byte
	long := 0
	for n := 1; ; {
		chunk, err := br.ReadSlice('\n')
		if room := maxSearchLine - len(line); len(chunk) > room {
			if long == 0 {
				long = n
			}
			chunk = chunk[:room]
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 {
			text := bytes.TrimRight(line, "\r\n")
			if re.Match(text) && !add(CodeMatch{Path: rel, Line: n, Text: clip(strings.ToValidUTF8(string(text), "\uFFFD"), maxMatchLineChars)}) {
				return false
			}
		}
		line = line[:0]
		n++
		if err != nil {
			if err != io.EOF {
				out.skip(rel, fmt.Sprintf("read failed at line %d: %v", n, err))
			}
			break
		}
		if n%4096 == 0 && ctx.Err() != nil {
			return false
		}
	}
	if long > 0 {
		out.skip(rel, fmt.Sprintf("line %d and maybe others are over %d bytes; only their first %d bytes were searched", long, maxSearchLine, maxSearchLine))
	}
	return true
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

func (w *Sandbox) editFile() Tool {
	return Tool{
		Name:    "edit_file",
		Summary: "replace exact text, or create",
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
			root, err := w.openRoot()
			if err != nil {
				return nil, err
			}
			defer root.Close()
			rel, err := w.resolve(ctx, root, a.Path, writeAccess)
			if err != nil {
				return nil, err
			}
			if a.Old == "" {
				if _, err := root.Lstat(rel); err == nil {
					return nil, errorf(CodeInvalidArgs, "%s already exists; give old text to replace, or use write_file to overwrite it", shown(a.Path))
				}
				if err := guardContent(a.Path, rel, nil, []byte(a.New)); err != nil {
					return nil, err
				}
				return write(root, rel, []byte(a.New), 0o644, true)
			}
			data, st, err := readWhole(root, rel, a.Path)
			if err != nil {
				return nil, err
			}
			switch n := strings.Count(string(data), a.Old); {
			case n == 0:
				return nil, errorf(CodeNoMatch, "old text not found in %s; read the file and copy the text exactly", shown(a.Path))
			case n > 1:
				return nil, errorf(CodeAmbiguousMatch, "old text occurs %d times in %s; include more surrounding lines so it matches once", n, shown(a.Path))
			}
			after := []byte(strings.Replace(string(data), a.Old, a.New, 1))
			if err := guardContent(a.Path, rel, data, after); err != nil {
				return nil, err
			}
			return write(root, rel, after, st.Mode().Perm(), false)
		},
	}
}

func (w *Sandbox) writeFile() Tool {
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
			root, err := w.openRoot()
			if err != nil {
				return nil, err
			}
			defer root.Close()
			rel, err := w.resolve(ctx, root, a.Path, writeAccess)
			if err != nil {
				return nil, err
			}
			mode, created := fs.FileMode(0o644), true
			var before []byte
			if st, err := root.Lstat(rel); err == nil {
				if err := regular(st, a.Path); err != nil {
					return nil, err
				}
				mode, created = st.Mode().Perm(), false
				if needsBefore(rel) {
					if before, err = readBefore(root, rel, a.Path); err != nil {
						return nil, err
					}
				}
			}
			if err := guardContent(a.Path, rel, before, []byte(a.Content)); err != nil {
				return nil, err
			}
			return write(root, rel, []byte(a.Content), mode, created)
		},
	}
}

// write replaces a file through a temporary file and a rename, so that a
// crash mid-write never leaves a half-written source file behind. Every
// step goes through root; the rename replaces whatever is at rel, a symlink
// swapped in included, rather than writing through it.
func write(root *os.Root, rel string, data []byte, mode fs.FileMode, created bool) (FileWritten, error) {
	dir := filepath.Dir(rel)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return FileWritten{}, pathError(rel, err)
		}
	}
	if err := atomicfile.WriteIn(root, rel, atomicfile.Options{Perm: mode}, atomicfile.Bytes(data)); err != nil {
		return FileWritten{}, pathError(rel, err)
	}
	return FileWritten{Path: filepath.ToSlash(rel), Bytes: len(data), Created: created}, nil
}
