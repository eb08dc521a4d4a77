package git

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// Config is one key of the repository's own git config (not the user's or
// the system's), or "" when it is not set: what `git config --local --get
// key` prints, which reads that one file and follows no include.
//
// Every command asks it (whether acolyte was set up here, and where the
// hooks live) before its own work, so it reads the file itself: a git
// process cost a search about 2 ms of its 20 to 40, and three of them ran
// in every repository with acolyte's hooks. A file the parser cannot read
// is left to git, which says what is wrong with it.
func (r *Repo) Config(key string) (string, error) {
	if v, ok := r.configInProcess(key); ok {
		return v, nil
	}
	return r.configByGit(key)
}

// configInProcess is Config read from the file; ok is false when the file
// or the key is not one it can answer for as git would.
func (r *Repo) configInProcess(key string) (value string, ok bool) {
	section, subsection, name, ok := splitConfigKey(key)
	if !ok {
		return "", false
	}
	data, err := os.ReadFile(filepath.Join(r.CommonDir(), "config"))
	if err != nil || bytes.Contains(data, []byte("\\\n")) || bytes.Contains(data, []byte("\\\r\n")) {
		// A value continued on the next line the parser keeps a
		// newline in, where git joins the lines.
		return "", false
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return "", false
	}
	if !cfg.HasSection(section) {
		return "", true
	}
	s := cfg.Section(section)
	if subsection == "" {
		return s.Options.Get(name), true
	}
	if !s.HasSubsection(subsection) {
		return "", true
	}
	return s.Subsection(subsection).Options.Get(name), true
}

// splitConfigKey splits a git config key as git does: the section is what
// precedes the first dot, the name what follows the last, and the
// subsection, which may hold dots, what lies between.
func splitConfigKey(key string) (section, subsection, name string, ok bool) {
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first <= 0 || last == len(key)-1 {
		return "", "", "", false
	}
	section, name = key[:first], key[last+1:]
	if last > first {
		subsection = key[first+1 : last]
	}
	return section, subsection, name, true
}
