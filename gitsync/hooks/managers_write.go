package hooks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync"
)

// errManual means acolyte cannot make an edit safely by text and leaves it
// to the user, with the text to add.
var errManual = errors.New("cannot edit it safely")

// writeIntegration makes one edit. The files are the team's, so each edit
// only adds text and keeps every byte that was there; YAML is edited as
// lines, not re-serialised, so comments, order and quoting survive.
func writeIntegration(files *hookFiles, root string, it Integration) error {
	path := filepath.Join(root, filepath.FromSlash(it.File))
	b, err := files.readOptional(path)
	if err != nil {
		return err
	}
	var out string
	switch {
	case it.Manual != "":
		return fmt.Errorf("%s: %w: %s", it.File, errManual, it.Manual)
	case it.Upgrade:
		out, _ = upgradeLegacy(string(b))
	case it.jsonKeys != nil:
		var edited []byte
		edited, err = setJSONStrings(b, it.jsonKeys, [][2]string{{it.Hooks[0], it.jsonValue}})
		out = string(edited)
	case filepath.Base(path) == preCommitConfig:
		out, err = addPreCommitEntry(string(b), it.spelling)
	case slices.Contains(lefthookYAMLConfigs, it.File):
		out, err = addLefthookEntry(string(b), it.Hooks[0])
	default:
		out = addHookLine(string(b), it.Add)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", it.File, err)
	}
	mode := os.FileMode(0o644)
	if fi, err := files.stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if it.Then == "" && it.jsonKeys == nil && !it.Upgrade {
		mode |= 0o111 // a hook script git or husky runs
	}
	return files.write(path, []byte(out), mode)
}

// addHookLine appends line to a hook script, before a final `exit`, which
// would otherwise end the script before it.
func addHookLine(script, line string) string {
	if strings.TrimSpace(script) == "" {
		return "#!/bin/sh\n" + line + "\n"
	}
	lines := strings.Split(strings.TrimRight(script, "\n"), "\n")
	at := len(lines)
	for at > 0 && strings.TrimSpace(lines[at-1]) == "" {
		at--
	}
	if at > 0 {
		last := strings.TrimSpace(lines[at-1])
		if last == "exit" || strings.HasPrefix(last, "exit ") {
			at--
		}
	}
	lines = slices.Insert(lines, at, line)
	return strings.Join(lines, "\n") + "\n"
}

// yamlBlock is the text of a top-level key's block: its line and every
// indented, sequence, blank or comment line after it.
func yamlBlock(doc, key string) string {
	start, end := yamlBlockLines(strings.Split(doc, "\n"), key)
	if start < 0 {
		return ""
	}
	return strings.Join(strings.Split(doc, "\n")[start:end], "\n")
}

// yamlBlockLines finds a top-level key: the index of its line and of the
// first line after its block, or -1, -1.
func yamlBlockLines(lines []string, key string) (int, int) {
	start := -1
	for i, l := range lines {
		if start < 0 {
			if rest, ok := strings.CutPrefix(l, key+":"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
				start = i
			}
			continue
		}
		// A sequence may sit at the key's own column (`repos:` then `- repo:`).
		if l != "" && !strings.ContainsRune(" \t#-", rune(l[0])) {
			return start, i
		}
	}
	if start < 0 {
		return -1, -1
	}
	return start, len(lines)
}

func indentOf(l string) string {
	return l[:len(l)-len(strings.TrimLeft(l, " "))]
}

// addLefthookEntry adds acolyte's command for hook name: a new top-level
// block, or an entry under the hook's existing `commands:` or `jobs:`.
func addLefthookEntry(doc, name string) (string, error) {
	lines := strings.Split(doc, "\n")
	start, end := yamlBlockLines(lines, name)
	if start < 0 {
		if doc != "" && !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		return doc + lefthookEntry(name), nil
	}
	if strings.TrimSpace(strings.TrimPrefix(lines[start], name+":")) != "" {
		return "", fmt.Errorf("%w: %s: is written on one line; add acolyte's command to it by hand", errManual, name)
	}
	for i := start + 1; i < end; i++ {
		key := strings.TrimSpace(lines[i])
		if key != "commands:" && key != "jobs:" {
			continue
		}
		child := ""
		for j := i + 1; j < end; j++ {
			if t := strings.TrimSpace(lines[j]); t != "" && !strings.HasPrefix(t, "#") {
				child = indentOf(lines[j])
				break
			}
		}
		if len(child) <= len(indentOf(lines[i])) && key == "commands:" {
			child = indentOf(lines[i]) + "  "
		}
		entry := []string{child + "acolyte:", child + "  run: " + ManagerLine(name)}
		if key == "jobs:" {
			entry = []string{child + "- name: acolyte", child + "  run: " + ManagerLine(name)}
		}
		return strings.Join(slices.Insert(lines, i+1, entry...), "\n"), nil
	}
	return "", fmt.Errorf("%w: %s: has neither commands: nor jobs:; add acolyte's command to it by hand", errManual, name)
}

// addPreCommitEntry adds acolyte's local repo at the end of `repos:`. An
// entry that names its stages also goes in default_install_hook_types, so
// that a plain `pre-commit install` installs acolyte's hooks. A hook
// without `stages:` runs in every stage pre-commit installs, so installing
// post-checkout, post-merge and post-rewrite would run the team's own
// hooks on every checkout, merge and amend (issue 36); default_stages,
// added when the file has none, keeps such hooks in exactly the stages
// they ran in before: all but the hook types acolyte adds. Neither can be
// written without a stage name pre-commit 3.2 renamed, so an entry that
// names none (spellNoStage) changes nothing else in the file: its
// acolyte-index runs where the team installs those types, and acolyte's
// own hooks in .git/hooks do elsewhere (Install).
func addPreCommitEntry(doc string, spelling stageSpelling) (string, error) {
	lines := strings.Split(strings.TrimRight(doc, "\n"), "\n")
	start, end := yamlBlockLines(lines, "repos")
	switch {
	case start < 0:
		lines = append(lines, "repos:", strings.TrimRight(preCommitEntry("", spelling), "\n"))
	case strings.TrimSpace(strings.TrimPrefix(lines[start], "repos:")) != "":
		return "", fmt.Errorf("%w: repos: is written on one line; add acolyte's entry to it by hand", errManual)
	default:
		indent, found, last := "  ", false, start
		for i := start + 1; i < end; i++ {
			t := strings.TrimSpace(lines[i])
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if !found && strings.HasPrefix(t, "-") {
				indent, found = indentOf(lines[i]), true
			}
			last = i
		}
		entry := strings.Split(strings.TrimRight(preCommitEntry(indent, spelling), "\n"), "\n")
		lines = slices.Insert(lines, last+1, entry...)
	}
	if spelling == spellNoStage {
		return strings.Join(lines, "\n") + "\n", nil
	}
	lines, added, err := addInstallTypes(lines)
	if err != nil {
		return "", err
	}
	if lines, err = keepDefaultStages(lines, added, spelling == spellNew); err != nil {
		return "", err
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// addInstallTypes makes default_install_hook_types name every hook acolyte
// uses, and returns those it added; a list written over several lines is
// left to the user.
func addInstallTypes(lines []string) ([]string, []string, error) {
	want := append([]string{"pre-commit"}, preCommitIndexStages...)
	start, _ := yamlBlockLines(lines, preCommitTypes)
	if start < 0 {
		// pre-commit installs the pre-commit hook alone by default.
		return append(lines, preCommitTypes+": ["+strings.Join(want, ", ")+"]"), want[1:], nil
	}
	have := flowList(strings.TrimPrefix(lines[start], preCommitTypes+":"))
	if have == nil {
		return nil, nil, fmt.Errorf("%w: add %s to %s by hand", errManual, strings.Join(gitsync.Hooks, ", "), preCommitTypes)
	}
	var added []string
	for _, h := range want {
		if !slices.Contains(have, h) {
			have = append(have, h)
			added = append(added, h)
		}
	}
	lines[start] = preCommitTypes + ": [" + strings.Join(have, ", ") + "]"
	return lines, added, nil
}

// keepDefaultStages makes sure the hook types just added (added) run no
// hook of the team's that has no `stages:` of its own. Without
// default_stages such a hook runs in every stage, so it adds one naming
// every stage but those; with one, it checks that none is named there,
// since the team's hooks would start running in it.
func keepDefaultStages(lines, added []string, modern bool) ([]string, error) {
	if len(added) == 0 {
		return lines, nil
	}
	start, _ := yamlBlockLines(lines, preCommitDefaultStages)
	if start >= 0 {
		have := flowList(strings.TrimPrefix(lines[start], preCommitDefaultStages+":"))
		if have == nil && strings.TrimSpace(strings.TrimPrefix(lines[start], preCommitDefaultStages+":")) != "" {
			return nil, fmt.Errorf("%w: %s is not a one-line list; make sure it does not name %s, then add acolyte's entry by hand", errManual, preCommitDefaultStages, strings.Join(added, ", "))
		}
		for _, h := range added {
			if slices.Contains(have, h) {
				return nil, fmt.Errorf("%w: %s names %s, so installing that hook would run the team's hooks without stages: in it; add acolyte's entry by hand", errManual, preCommitDefaultStages, h)
			}
		}
		if have == nil {
			return nil, fmt.Errorf("%w: %s is written over several lines; make sure it does not name %s, then add acolyte's entry by hand", errManual, preCommitDefaultStages, strings.Join(added, ", "))
		}
		return lines, nil
	}
	var keep []string
	for _, stage := range preCommitStages {
		if slices.Contains(added, stage) {
			continue
		}
		keep = append(keep, preCommitStageName(stage, modern))
	}
	return append(lines, preCommitDefaultStages+": ["+strings.Join(keep, ", ")+"]"), nil
}
