package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync"
)

// Removal is what `hooks uninstall` did to one file of a hook manager's:
// the lines or entries of acolyte's it took out, or why it left them.
type Removal struct {
	// File is relative to the repository root.
	File string `json:"file"`
	// Hooks are the hooks whose acolyte lines were in the file.
	Hooks []string `json:"hooks"`
	// Removed is true when the file no longer runs acolyte; Deleted when
	// nothing but a shebang was left of it, so it went.
	Removed bool `json:"removed"`
	Deleted bool `json:"deleted,omitempty"`
	// Manual says what is left for the user to remove, and where.
	Manual string `json:"manual,omitempty"`
}

// RemoveManagerLines takes acolyte's lines and entries out of the hook
// manager's files (what `hooks install --write` and `init --write` add),
// keeping every other byte, so that uninstalling leaves the team's hooks
// as they were. Lines it cannot take out by text are reported in Manual.
func RemoveManagerLines(ctx context.Context, r *gitsync.Repo) ([]Removal, error) {
	s, err := detectSetup(ctx, r)
	if err != nil {
		return nil, err
	}
	var out []Removal
	edit := func(path string, hooks []string, change func(string) (string, string)) error {
		b, err := s.read(path)
		if err != nil || b == nil {
			return err
		}
		edited, manual := change(string(b))
		rm := Removal{File: r.Rel(path), Hooks: hooks, Manual: manual}
		if edited != string(b) {
			if err := s.rewrite(path, edited); err != nil {
				return err
			}
			rm.Deleted = edited == ""
		}
		rm.Removed = !strings.Contains(edited, "acolyte hook ")
		if edited != string(b) || manual != "" {
			out = append(out, rm)
		}
		return nil
	}
	switch s.manager {
	case ManagerHusky, ManagerHooksFolder:
		for _, name := range gitsync.Hooks {
			if err := edit(filepath.Join(s.teamDir, name), []string{name}, func(doc string) (string, string) {
				return removeHookLines(doc, name), ""
			}); err != nil {
				return out, err
			}
		}
	case ManagerLefthook:
		for _, path := range []string{s.config, lefthookLocal(s.config)} {
			if err := edit(path, gitsync.Hooks, func(doc string) (string, string) {
				for _, name := range gitsync.Hooks {
					doc = removeLefthookEntry(doc, name)
				}
				return doc, ""
			}); err != nil {
				return out, err
			}
		}
	case ManagerPreCommit:
		if err := edit(s.config, gitsync.Hooks, removePreCommitEntry); err != nil {
			return out, err
		}
	case ManagerSimpleGitHooks, ManagerHusky4:
		keys := []string{"simple-git-hooks"}
		if s.manager == ManagerHusky4 {
			keys = []string{"husky", "hooks"}
		}
		if err := edit(s.config, gitsync.Hooks, func(doc string) (string, string) {
			return removePackageCommands(doc, keys)
		}); err != nil {
			return out, err
		}
	}
	return out, nil
}

// read and rewrite are how removal and upgrades reach the manager's
// files: read gives nil for a missing file, and rewrite keeps the file's
// mode, or removes it when content is "".
func (s hookSetup) read(path string) ([]byte, error) { return s.files.readOptional(path) }

func (s hookSetup) rewrite(path, content string) error {
	if content == "" {
		if err := s.files.remove(path); err != nil {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		return nil
	}
	fi, err := s.files.stat(path)
	if err != nil {
		return err
	}
	return s.files.write(path, []byte(content), fi.Mode().Perm())
}

// removeHookLines drops the lines of a hook script that run acolyte's work
// for name; a script left with nothing but its shebang, as acolyte
// creates one, becomes "" (to be removed).
func removeHookLines(doc, name string) string {
	lines := strings.Split(doc, "\n")
	kept := slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return runsAcolyte([]byte(l), name) })
	if len(kept) == len(lines) {
		return doc
	}
	rest := strings.TrimSpace(strings.Join(kept, "\n"))
	if rest == "" || (strings.HasPrefix(rest, "#!") && !strings.Contains(rest, "\n")) {
		return ""
	}
	return strings.Join(kept, "\n")
}

// removeLefthookEntry drops acolyte's command under hook name (a
// `commands:` key `acolyte:` or a `jobs:` item named acolyte, with the
// lines indented below it) and then the hook's whole block if nothing of
// the team's is left in it, as when acolyte added the block.
func removeLefthookEntry(doc, name string) string {
	lines := strings.Split(doc, "\n")
	start, end := yamlBlockLines(lines, name)
	if start < 0 {
		return doc
	}
	for i := start + 1; i < end; i++ {
		t := strings.TrimSpace(lines[i])
		if t != "acolyte:" && t != "- name: acolyte" {
			continue
		}
		indent := len(indentOf(lines[i]))
		j := i + 1
		for j < end && (strings.TrimSpace(lines[j]) == "" || len(indentOf(lines[j])) > indent) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "- ") {
			j++
		}
		if !strings.Contains(strings.Join(lines[i:j], "\n"), "acolyte hook "+name) {
			continue
		}
		lines = slices.Delete(lines, i, j)
		break
	}
	start, end = yamlBlockLines(lines, name)
	team := false
	for _, l := range lines[start+1 : end] {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && t != "commands:" && t != "jobs:" {
			team = true
		}
	}
	if !team {
		lines = slices.Delete(lines, start, end)
	}
	return strings.Join(lines, "\n")
}

// removePreCommitEntry drops acolyte's local repo (any stage spelling,
// either line form) and, for an entry that names its stages, what
// addPreCommitEntry added at the top level with it: the three hook types
// in default_install_hook_types, and a default_stages exactly as it
// writes one. An entry that names no stage came alone, so the top level
// is the team's.
func removePreCommitEntry(doc string) (string, string) {
	lines := strings.Split(doc, "\n")
	alone := false
	for i := 0; i+15 < len(lines); i++ {
		at := func(k int) string { return strings.TrimSpace(lines[i+k]) }
		if at(0) == "- repo: local" && at(1) == "hooks:" && at(2) == "- id: acolyte" && at(9) == "- id: acolyte-index" &&
			strings.HasPrefix(at(15), "stages: [post-checkout") {
			alone = strings.Contains(lines[i+4], OnlyCommitStage)
			lines = slices.Delete(lines, i, i+16)
			break
		}
	}
	added := preCommitIndexStages
	manual := ""
	if start, _ := yamlBlockLines(lines, preCommitTypes); start >= 0 && !alone {
		have := flowList(strings.TrimPrefix(lines[start], preCommitTypes+":"))
		left := slices.DeleteFunc(slices.Clone(have), func(h string) bool { return slices.Contains(added, h) })
		switch {
		case have == nil:
			manual = fmt.Sprintf("remove %s from %s if only acolyte needed them", strings.Join(added, ", "), preCommitTypes)
		case slices.Equal(left, []string{"pre-commit"}) || len(left) == 0:
			lines = slices.Delete(lines, start, start+1)
		case len(left) < len(have):
			lines[start] = preCommitTypes + ": [" + strings.Join(left, ", ") + "]"
		}
	}
	if start, _ := yamlBlockLines(lines, preCommitDefaultStages); start >= 0 && !alone {
		for _, modern := range []bool{false, true} {
			ours, _ := keepDefaultStages(nil, added, modern)
			if len(ours) == 1 && strings.TrimSpace(lines[start]) == ours[0] {
				lines = slices.Delete(lines, start, start+1)
				break
			}
		}
	}
	if strings.Contains(strings.Join(lines, "\n"), "acolyte hook ") {
		manual = strings.TrimPrefix(manual+"; remove acolyte's hooks from repos: by hand (they were edited since acolyte added them)", "; ")
	}
	return strings.Join(lines, "\n"), manual
}

// removePackageCommands takes acolyte's command out of each hook's command
// in the package.json object at keys: what chainCommand appended after the
// team's, or the whole member when the command was acolyte's alone.
func removePackageCommands(doc string, keys []string) (string, string) {
	b := []byte(doc)
	for _, name := range gitsync.Hooks {
		_, _, members, err := jsonObjectAt(b, keys)
		if err != nil {
			return string(b), ""
		}
		i := slices.IndexFunc(members, func(m jsonMember) bool { return m.key == name })
		if i < 0 {
			continue
		}
		var value string
		if raw := b[members[i].start:members[i].end]; len(raw) > 0 && raw[0] == '"' {
			if err := json.Unmarshal(raw, &value); err != nil {
				continue
			}
		}
		if !strings.Contains(value, "acolyte hook "+name) {
			continue
		}
		team, _, chained := strings.Cut(value, " && { ")
		if chained && strings.Contains(value[len(team):], "acolyte hook "+name) && !strings.Contains(team, "acolyte hook ") {
			if edited, err := setJSONStrings(b, keys, [][2]string{{name, team}}); err == nil {
				b = edited
			}
			continue
		}
		b = deleteJSONMember(b, members, i)
	}
	manual := ""
	if bytes.Contains(b, []byte("acolyte hook ")) {
		manual = "remove acolyte's commands from package.json by hand (they were edited since acolyte added them)"
	}
	return string(b), manual
}

// deleteJSONMember removes member i of an object, with the separator
// before it (or, for the first, after it), keeping every other byte.
func deleteJSONMember(doc []byte, members []jsonMember, i int) []byte {
	keyStart := func(m jsonMember) int {
		colon := bytes.LastIndexByte(doc[:m.start], ':')
		closing := bytes.LastIndexByte(doc[:colon], '"')
		return bytes.LastIndexByte(doc[:closing], '"')
	}
	switch {
	case i > 0:
		return slices.Concat(doc[:members[i-1].end], doc[members[i].end:])
	case len(members) > 1:
		return slices.Concat(doc[:keyStart(members[0])], doc[keyStart(members[1]):])
	}
	open := bytes.LastIndexByte(doc[:keyStart(members[0])], '{')
	close := members[0].end + bytes.IndexByte(doc[members[0].end:], '}')
	return slices.Concat(doc[:open+1], doc[close:])
}
