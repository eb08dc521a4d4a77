package toolbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// maxSymlinks bounds how many symlinks one path may pass through, as the
// kernel's own resolution does (Linux stops at 40).
const maxSymlinks = 40

// access says what a tool means to do with a path: the guards differ.
type access int

const (
	readAccess access = iota
	writeAccess
)

// openRoot opens the workspace root for one tool call.
//
// The root is opened per call rather than kept open on the Sandbox: a
// Sandbox stays a plain value that needs no Close (callers and tests make
// many and never close them, and an open handle would keep a Windows temp
// dir from being removed), and one open(2) is nothing next to the work of
// any tool. The root directory itself is the user's choice and trusted; what
// the model names inside it is not, and every access below it goes through
// the *os.Root, which refuses to leave the tree even while another process
// swaps directories for symlinks.
func (w *Sandbox) openRoot() (*os.Root, error) {
	r, err := os.OpenRoot(w.Root)
	if err != nil {
		return nil, fmt.Errorf("open workspace root: %w", err)
	}
	return r, nil
}

// resolve maps a path the model gave (relative to the root, or absolute) to
// a clean relative path inside the root with every symlink on the way
// replaced by its target, then applies the guards for acc. The result names
// what the tool will touch, so the guards judge the real location, not a
// symlink's name; the operation itself still goes through root, so a
// component swapped for a symlink after this check cannot lead outside.
//
// Symlinks are followed here rather than left to os.Root because a
// symlink's target decides whether the path is inside a git directory, and
// because os.Root refuses absolute symlinks even when they point inside.
func (w *Sandbox) resolve(ctx context.Context, root *os.Root, p string, acc access) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errorf(CodeInvalidArgs, "give a path relative to the workspace root")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", errorf(CodeInvalidArgs, "path contains a NUL byte")
	}
	rel, ok := w.inside(p)
	if !ok {
		return "", w.outside(p)
	}
	done, err := w.follow(root, p, rel)
	if err != nil {
		return "", err
	}
	resolved := filepath.Join(done...)
	if resolved == "" {
		resolved = "."
	}
	if err := w.guard(ctx, root, p, done, acc); err != nil {
		return "", err
	}
	return resolved, nil
}

// follow walks rel, relative to the root, component by component, replacing
// every symlink on the way by its target, and returns the components of the
// real location. p is the path as given, for errors.
func (w *Sandbox) follow(root *os.Root, p, rel string) ([]string, error) {
	var done []string
	todo := splitPath(rel)
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return nil, w.outside(p)
			}
			done = done[:len(done)-1]
			continue
		}
		cur := filepath.Join(append(done, c)...)
		st, err := root.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			// Nothing by this name yet, so it is no symlink: a write creates it.
			done = append(done, c)
			continue
		}
		if err != nil {
			return nil, pathError(p, err)
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if links++; links > maxSymlinks {
			return nil, errorf(CodeInvalidArgs, "%s passes through more than %d symlinks; give the real path", shown(p), maxSymlinks)
		}
		target, err := root.Readlink(cur)
		if err != nil {
			return nil, pathError(p, err)
		}
		if filepath.IsAbs(target) {
			r, ok := w.inside(target)
			if !ok {
				return nil, w.outside(p)
			}
			done, todo = nil, append(splitPath(r), todo...)
		} else {
			todo = append(splitPath(target), todo...)
		}
	}
	return done, nil
}

// inside maps p to a path relative to the root, lexically; false means it
// leaves the root. An absolute path that reaches the root through a symlink
// (/tmp on macOS is /private/tmp) is mapped by resolving its deepest
// existing ancestor: that only computes a name, which resolve then walks
// through the root like any other.
func (w *Sandbox) inside(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		rel := filepath.Clean(p)
		return rel, rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	p = filepath.Clean(p)
	if rel, ok := relUnder(w.Root, p); ok {
		return rel, true
	}
	existing, rest := p, ""
	for {
		if real, err := filepath.EvalSymlinks(existing); err == nil {
			return relUnder(w.Root, filepath.Join(real, rest))
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return "", false
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
}

func relUnder(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

func splitPath(p string) []string {
	return strings.FieldsFunc(filepath.ToSlash(p), func(r rune) bool { return r == '/' })
}

func (w *Sandbox) outside(p string) *Error {
	return errorf(CodeOutsideWorkspace, "%s is outside the workspace %s; use a path inside it", shown(p), w.Root)
}

// pathError turns a failed lookup into an error the model can act on. A
// lookup that os.Root stopped from escaping the tree (a symlink swapped in
// under it) is reported as what it is.
func pathError(p string, err error) error {
	if strings.Contains(err.Error(), "path escapes from parent") {
		return errorf(CodeOutsideWorkspace, "%s leads outside the workspace through a symlink; use a path inside it", shown(p))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return errorf(CodeNotFound, "%s does not exist; list_files shows what does", shown(p))
	}
	return fmt.Errorf("%s: %w", shown(p), err)
}

// shown is a path as error messages quote it: a model can send a path of
// megabytes, and an error must not carry it back whole.
func shown(p string) string { return clip(p, 200) }

// guard refuses what the tools must not touch at all: anything inside a
// git directory, where a hook or a config line (core.fsmonitor, a filter)
// runs commands on the user's next git command, which is a way around
// run_shell's consent; and, for writes, what would make a git directory,
// .acolyte/, whose memories change only through the memory tools, which
// check them for secrets, and what git runs or obeys (guardTrusted).
//
// The guards judge the path as resolved a moment before the operation.
// os.Root keeps the operation inside the workspace whatever happens in
// between, but a concurrent process could still swap a directory for a
// symlink into .git in that moment; such a process can write .git itself,
// so it gains nothing, and the model's own tools cannot make symlinks.
func (w *Sandbox) guard(ctx context.Context, root *os.Root, p string, comps []string, acc access) error {
	gitDirs := w.gitDirs(root, comps)
	for i := range comps {
		dir := filepath.Join(comps[:i+1]...)
		if isDotGit(comps[i]) || isGitDir(root, dir) || sameAsAny(root, dir, gitDirs) {
			return errorf(CodeDenied, "%s is inside a git directory; the workspace tools never read or write git's own files, "+
				"because hooks and config there run commands. Change the working tree instead, and leave git's state to git commands the user runs", shown(p))
		}
		if acc == writeAccess && wouldMakeGitDir(root, comps, i) {
			return errorf(CodeDenied, "%s would make %s a git directory (HEAD with commondir, or with objects/ and refs/), whose config git would obey there; "+
				"the workspace tools do not create repositories. Ask the user to run git init if one is needed", shown(p), filepath.ToSlash(filepath.Join(append([]string{"."}, comps[:i]...)...)))
		}
		if acc == writeAccess && isDotAcolyte(comps[i]) {
			return errorf(CodeDenied, "%s is in .acolyte/, the project's memory, which the file tools may read but not change; "+
				"use memory_add and memory_remove, which check memories and keep .acolyte/ and the index in step", shown(p))
		}
	}
	if acc == writeAccess {
		return w.guardTrusted(ctx, root, p, comps)
	}
	return nil
}

// gitDirs returns the git directories that .git files (linked worktrees,
// submodules, --separate-git-dir) in the root and in every directory on
// comps' way point to, when they lie inside the root. A .git directory is
// caught by its name; these can be called anything.
func (w *Sandbox) gitDirs(root *os.Root, comps []string) []fs.FileInfo {
	var out []fs.FileInfo
	for i := 0; i <= len(comps); i++ {
		dir := filepath.Join(comps[:i]...)
		if dir == "" {
			dir = "."
		}
		dotGit := filepath.Join(dir, ".git")
		if st, err := root.Lstat(dotGit); err != nil || !st.Mode().IsRegular() {
			continue
		}
		f, _, err := openRegular(root, dotGit, dotGit)
		if err != nil {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(f, 4096))
		f.Close()
		if err != nil {
			continue
		}
		target, ok := parseGitFile(b)
		if !ok {
			continue
		}
		var rel string
		if filepath.IsAbs(target) {
			if rel, ok = w.inside(target); !ok {
				continue
			}
		} else if rel, ok = relUnder(".", filepath.Join(dir, target)); !ok {
			continue
		}
		if st, err := root.Stat(rel); err == nil {
			out = append(out, st)
		}
		// A linked worktree's git dir keeps its config and hooks in the
		// common dir its commondir names.
		if common, ok := w.readCommonDir(root, rel); ok {
			if st, err := root.Stat(common); err == nil {
				out = append(out, st)
			}
		}
	}
	return out
}

// readCommonDir reads gitDir/commondir, a path relative to gitDir or
// absolute, and maps it inside the root.
func (w *Sandbox) readCommonDir(root *os.Root, gitDir string) (string, bool) {
	name := filepath.Join(gitDir, "commondir")
	f, _, err := openRegular(root, name, name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", false
	}
	target := strings.TrimSpace(string(b))
	if target == "" {
		return "", false
	}
	if filepath.IsAbs(target) {
		return w.inside(target)
	}
	return relUnder(".", filepath.Join(gitDir, target))
}

// parseGitFile reads the one line of a .git file: "gitdir: PATH".
func parseGitFile(b []byte) (string, bool) {
	s, ok := strings.CutPrefix(string(b), "gitdir:")
	if !ok {
		return "", false
	}
	s = strings.TrimSpace(s)
	return s, s != ""
}

// wouldMakeGitDir says whether writing comps completes a git directory in
// the directory holding comps[i], by git's own test (is_git_directory): a
// HEAD file, and either a commondir file, which makes it a linked
// worktree's git directory whose objects, refs and config are wherever
// commondir points, or objects/ and refs/ of its own. A model could
// otherwise build one, file by file, with a planted config that git obeys
// when the user runs it there. A HEAD beside a commondir is refused whatever
// commondir points at, since the files that make its target a repository
// can be written afterwards.
func wouldMakeGitDir(root *os.Root, comps []string, i int) bool {
	dir := filepath.Join(append([]string{"."}, comps[:i]...)...)
	rest := comps[i:]
	has := func(name string, wantDir bool) bool {
		if strings.EqualFold(rest[0], name) && (len(rest) > 1) == wantDir {
			return true
		}
		st, err := root.Stat(filepath.Join(dir, name))
		if err != nil {
			return false
		}
		if wantDir {
			// git asks access(X_OK), which an executable file passes too.
			return st.IsDir() || st.Mode()&0o111 != 0
		}
		return !st.IsDir()
	}
	if !has("HEAD", false) {
		return false
	}
	return has("commondir", false) || hasObjects(has) && has("refs", true)
}

// hasObjects is the objects/ half of git's test: with GIT_OBJECT_DIRECTORY
// set, git asks for no objects/ in the directory at all.
func hasObjects(has func(string, bool) bool) bool {
	return os.Getenv("GIT_OBJECT_DIRECTORY") != "" || has("objects", true)
}

// isGitDir says whether dir looks like a git directory the way git itself
// decides it (HEAD, objects/ and refs/, or a linked worktree's HEAD and
// commondir), so a bare repository or a git dir with another name is
// protected as well as .git.
func isGitDir(root *os.Root, dir string) bool {
	if st, err := root.Lstat(filepath.Join(dir, "HEAD")); err != nil || st.IsDir() {
		return false
	}
	// A linked worktree's git dir has no objects/ of its own but names the
	// common one.
	if st, err := root.Lstat(filepath.Join(dir, "commondir")); err == nil && st.Mode().IsRegular() {
		return true
	}
	has := func(name string, _ bool) bool {
		st, err := root.Stat(filepath.Join(dir, name))
		return err == nil && st.IsDir()
	}
	return hasObjects(has) && has("refs", true)
}

func sameAsAny(root *os.Root, dir string, dirs []fs.FileInfo) bool {
	if len(dirs) == 0 {
		return false
	}
	st, err := root.Lstat(dir)
	if err != nil {
		return false
	}
	for _, d := range dirs {
		if os.SameFile(st, d) {
			return true
		}
	}
	return false
}

// isDotGit reports whether a file name means .git on some filesystem git
// runs on: case folded (macOS, Windows), with the trailing dots and spaces
// and the ":stream" suffix Windows ignores, the 8.3 short name GIT~1, and
// the code points HFS+ ignores. Git refuses the same names in trees it
// checks out (is_ntfs_dotgit, is_hfs_dotgit).
func isDotGit(name string) bool {
	n := normalizeName(name)
	return n == ".git" || n == "git~1"
}

// isDotAcolyte is isDotGit for .acolyte.
func isDotAcolyte(name string) bool {
	n := normalizeName(name)
	return n == ".acolyte" || n == "acolyt~1"
}

func normalizeName(name string) string {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	var b strings.Builder
	for _, r := range name {
		if r == utf8.RuneError || hfsIgnorable(r) {
			continue
		}
		b.WriteRune(r)
	}
	return strings.ToLower(strings.TrimRight(b.String(), ". "))
}

// hfsIgnorable lists the code points HFS+ drops when comparing names, the
// same list as git's is_hfs_dotgit.
func hfsIgnorable(r rune) bool {
	switch {
	case r == 0x200c, r == 0x200d, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x206a && r <= 0x206f:
		return true
	case r == 0xfeff:
		return true
	}
	return false
}

// openRegular opens rel, already resolved, for reading, refusing anything
// but a regular file without blocking: a FIFO with no writer would hang
// open(2) forever, so the name is checked first, opened non-blocking, and
// the opened file checked again to be the very file that was checked.
func openRegular(root *os.Root, rel, p string) (*os.File, fs.FileInfo, error) {
	before, err := root.Lstat(rel)
	if err != nil {
		return nil, nil, pathError(p, err)
	}
	if err := regular(before, p); err != nil {
		return nil, nil, err
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, nil, pathError(p, err)
	}
	after, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if err := regular(after, p); err != nil {
		f.Close()
		return nil, nil, err
	}
	if !os.SameFile(before, after) {
		f.Close()
		return nil, nil, errorf(CodeDenied, "%s changed while it was being opened; try again", shown(p))
	}
	return f, after, nil
}

func regular(st fs.FileInfo, p string) error {
	switch m := st.Mode(); {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return errorf(CodeInvalidArgs, "%s is a directory; use list_files", shown(p))
	default:
		return errorf(CodeInvalidArgs, "%s is not a regular file (%s); the file tools read and write regular files only", shown(p), kindOf(m))
	}
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "mode " + m.String()
}
