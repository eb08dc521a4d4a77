package derive

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// SkippedDirs are never part of a project's own instructions or paths, even
// in repositories that forget to ignore them.
var SkippedDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true}

// WalkWorktree calls visit for every file and directory under root that git
// would track: it skips .git, node_modules, vendor, nested repositories
// (their own instructions belong to them) and whatever .gitignore files
// ignore. rel is slash-separated and relative to root.
func WalkWorktree(root string, visit func(rel string, d fs.DirEntry) error) error {
	var patterns []gitignore.Pattern
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			// An unreadable corner of the tree should not hide the rest of it.
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			patterns = append(patterns, readIgnoreFile(p, nil)...)
			return nil
		}
		parts := strings.Split(rel, "/")
		if d.IsDir() {
			if SkippedDirs[d.Name()] || gitignore.NewMatcher(patterns).Match(parts, true) {
				return fs.SkipDir
			}
			if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
				return fs.SkipDir
			}
			patterns = append(patterns, readIgnoreFile(p, parts)...)
		} else if gitignore.NewMatcher(patterns).Match(parts, false) {
			return nil
		}
		return visit(rel, d)
	})
}

// readIgnoreFile reads dir/.gitignore; patterns carry their directory as
// domain, so patterns of sibling directories never match each other.
func readIgnoreFile(dir string, domain []string) []gitignore.Pattern {
	f, err := os.Open(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	return ParseIgnore(data, domain)
}

// ParseIgnore parses the lines of a .gitignore file in the folder domain.
func ParseIgnore(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		line := strings.TrimRight(s.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// InstructionNames are the agent instruction files whose rules become
// memories, in the order their rules are listed when they share a folder.
var InstructionNames = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md"}

// InstructionFiles lists the agent instruction files in the worktree at root,
// slash-separated and relative to it: the root's first, then nested ones by
// path.
func InstructionFiles(root string) ([]string, error) {
	var files []string
	err := WalkWorktree(root, func(rel string, d fs.DirEntry) error {
		if d.IsDir() || !IsInstructionPath(rel) {
			return nil
		}
		files = append(files, rel)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	SortInstructionFiles(files)
	return files, nil
}

func SortInstructionFiles(files []string) {
	// The root's files, then other agents' rule files by path, then nested ones.
	rank := func(rel string) (int, string, int) {
		dir := path.Dir(rel)
		switch {
		case isAgentRuleFile(rel):
			return 1, rel, 0
		case dir != ".":
			return 2, dir, slices.Index(InstructionNames, path.Base(rel))
		}
		return 0, dir, slices.Index(InstructionNames, path.Base(rel))
	}
	slices.SortFunc(files, func(a, b string) int {
		da, dira, na := rank(a)
		db, dirb, nb := rank(b)
		return cmp.Or(cmp.Compare(da, db), strings.Compare(dira, dirb), cmp.Compare(na, nb))
	})
}

func isInstructionName(name string) bool {
	for _, n := range InstructionNames {
		if name == n {
			return true
		}
	}
	return false
}
