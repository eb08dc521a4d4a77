package gitsync

import (
	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/internal/lazyre"
)

// pathTokenRe finds words that could name a file or folder: runs of path
// characters that contain a slash or a dot-extension.
var pathTokenRe = lazyre.New(`[A-Za-z0-9_@+~./-]+`)

// lineSuffixRe is the ":42" or ":42:7" editors and compilers put after a path.
var lineSuffixRe = lazyre.New(`(?::\d+)+$`)

// maxNameMatches caps how many files a bare file name may resolve to; a name
// found all over the tree ("README.md") says nothing about which one is meant.
const maxNameMatches = 3

// MentionedPaths returns the repository paths that content mentions and that
// exist in the worktree at root, slash-separated, sorted and unique. Tokens
// with a slash are checked as paths from the root; bare file names like
// "memory.go" are looked up across the worktree and kept when they name at
// most three files.
func MentionedPaths(root, content string) []string {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	var found, bareNames []string
	for _, tok := range pathTokenRe().FindAllString(stripURLs(content), -1) {
		tok = strings.TrimRight(tok, ".,")
		tok = lineSuffixRe().ReplaceAllString(tok, "")
		if filepath.IsAbs(tok) {
			rel, err := filepath.Rel(absRoot, tok)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			tok = filepath.ToSlash(rel)
		}
		tok = strings.TrimPrefix(tok, "./")
		isPath := strings.Contains(tok, "/")
		tok = strings.TrimSuffix(tok, "/")
		if tok == "" || tok == "." || !fs.ValidPath(tok) {
			continue // also rejects ".." escapes
		}
		switch {
		case isPath:
			if exists(absRoot, tok) {
				found = append(found, tok)
			}
		case looksLikeFileName(tok):
			if exists(absRoot, tok) {
				found = append(found, tok)
			} else {
				bareNames = append(bareNames, tok)
			}
		}
	}
	if len(bareNames) > 0 {
		found = append(found, findByName(absRoot, bareNames)...)
	}
	slices.Sort(found)
	return slices.Compact(found)
}

var urlRe = lazyre.New(`[A-Za-z][A-Za-z0-9+.-]*://\S+`)

func stripURLs(s string) string {
	return urlRe().ReplaceAllString(s, " ")
}

// looksLikeFileName accepts name.ext with a short alphabetic extension, and
// dotfiles like .gitignore, but not version numbers or abbreviations.
func looksLikeFileName(tok string) bool {
	dot := strings.LastIndexByte(tok, '.')
	if dot < 0 || dot == len(tok)-1 {
		return false
	}
	ext := tok[dot+1:]
	if len(ext) > 10 || strings.Trim(ext, "0123456789") == "" {
		return false
	}
	return dot > 0 && len(tok[:dot]) > 1 || dot == 0
}

func exists(root, rel string) bool {
	_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil
}

func findByName(root string, names []string) []string {
	matches := make(map[string][]string)
	for _, n := range names {
		matches[n] = nil
	}
	_ = derive.WalkWorktree(root, func(rel string, d fs.DirEntry) error {
		if list, wanted := matches[path.Base(rel)]; wanted && len(list) <= maxNameMatches {
			matches[path.Base(rel)] = append(list, rel)
		}
		return nil
	})
	var found []string
	for _, list := range matches {
		if len(list) <= maxNameMatches {
			found = append(found, list...)
		}
	}
	return found
}
