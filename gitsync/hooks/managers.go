package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync"
)

// The hook managers acolyte integrates with instead of writing shims. Each
// owns the hooks git runs and rewrites them on its own reinstall (husky on
// every npm install, lefthook when its config changes, simple-git-hooks and
// the pre-commit framework on theirs), so acolyte's work has to live where
// the manager looks: the team's hook file or the manager's config.
const (
	ManagerHusky          = "husky"            // v9: core.hooksPath .husky/_, the team's scripts in .husky/
	ManagerHusky4         = "husky 4"          // package.json "husky": {"hooks": …}, hooks in .git/hooks
	ManagerLefthook       = "lefthook"         // lefthook.yml
	ManagerPreCommit      = "pre-commit"       // the pre-commit framework, .pre-commit-config.yaml
	ManagerSimpleGitHooks = "simple-git-hooks" // package.json "simple-git-hooks": {…}
	ManagerHooksFolder    = "hooks folder"     // core.hooksPath on a folder the repository shares
)

// lefthookYAMLConfigs are the team config files lefthook 1 and 2 read, in
// its order, that acolyte can edit (trust.go lists every file it reads).
var lefthookYAMLConfigs = []string{"lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml", ".config/lefthook.yml", ".config/lefthook.yaml"}

// preCommitConfig is the pre-commit framework's config file.
const preCommitConfig = ".pre-commit-config.yaml"

// hookSetup is who owns the hooks of one checkout, found by detectSetup.
type hookSetup struct {
	manager string
	// gitDir is the folder git runs hooks from.
	gitDir string
	// teamDir holds the team's hook scripts (husky's .husky, a hooks folder).
	teamDir string
	// config is the manager's config file (lefthook, pre-commit, package.json).
	config string
	// files reads and writes all of them; the caller of detectSetup closes it.
	files *hookFiles
}

// detectSetup finds the hook manager of the checkout, if any. A manager is
// recognised by its own layout, not by whether it has installed its hooks
// yet: in a fresh clone before `npm install`, husky's scripts are already
// the team's hooks and a shim in .git/hooks would be the one thing husky's
// install makes git stop running.
func detectSetup(ctx context.Context, r *gitsync.Repo) (hookSetup, error) {
	dir, err := Dir(r)
	if err != nil {
		return hookSetup{}, err
	}
	files, err := openHookFiles(r)
	if err != nil {
		return hookSetup{}, err
	}
	s, err := detectManager(ctx, r, files, dir)
	if err != nil {
		files.Close()
		return hookSetup{}, err
	}
	s.files = files
	return s, nil
}

// detectManager is detectSetup with the worktree open.
func detectManager(ctx context.Context, r *gitsync.Repo, files *hookFiles, dir string) (hookSetup, error) {
	s := hookSetup{gitDir: dir}
	stub, err := files.isFile(filepath.Join(dir, "h"))
	if err != nil {
		return s, err
	}
	if stub && filepath.Base(dir) == "_" {
		s.manager, s.teamDir = ManagerHusky, filepath.Dir(dir)
		return s, nil
	}
	if dir != filepath.Join(r.CommonDir(), "hooks") {
		shared, err := sharedHooksDir(ctx, r, dir)
		if err != nil {
			return s, err
		}
		if shared {
			s.manager, s.teamDir = ManagerHooksFolder, dir
		}
		return s, nil
	}
	for _, name := range lefthookYAMLConfigs {
		p := filepath.Join(r.Root, name)
		if ok, err := files.isFile(p); ok || err != nil {
			s.manager, s.config = ManagerLefthook, p
			return s, err
		}
	}
	p := filepath.Join(r.Root, preCommitConfig)
	if ok, err := files.isFile(p); ok || err != nil {
		s.manager, s.config = ManagerPreCommit, p
		return s, err
	}
	pkg := filepath.Join(r.Root, "package.json")
	hooks, ok, err := files.packageHooks(pkg, "simple-git-hooks")
	if err != nil {
		return s, err
	}
	if ok && hooks != nil {
		s.manager, s.config = ManagerSimpleGitHooks, pkg
		return s, nil
	}
	if hooks, ok, _ := files.packageHooks(pkg, "husky", "hooks"); ok && hooks != nil {
		s.manager, s.config = ManagerHusky4, pkg
		return s, nil
	}
	husky := filepath.Join(r.Root, ".husky")
	if ok, err := files.isDir(husky); ok || err != nil {
		// husky 9 before its first install: .husky/ is committed, core.hooksPath not yet set.
		s.manager, s.teamDir = ManagerHusky, husky
		s.gitDir = filepath.Join(s.teamDir, "_")
		return s, err
	}
	return s, nil
}

// shimmedHooks are acolyte's hooks that its own shims run although a
// manager owns the hooks. With the pre-commit framework those are the
// types its config does not have `pre-commit install` install
// (default_install_hook_types) and that pre-commit has not installed here
// by hand: nothing of pre-commit's runs in them, and having pre-commit
// install them for acolyte would run the team's hooks without stages:
// there too, unless a default_stages that names a renamed stage kept
// them out (addPreCommitEntry). Where pre-commit does install one, its
// acolyte-index entry runs acolyte (and a shim that was there first, which
// pre-commit keeps as <hook>.legacy and runs before it).
func (s hookSetup) shimmedHooks() ([]string, error) {
	if s.manager != ManagerPreCommit {
		return nil, nil
	}
	b, err := s.files.readOptional(s.config)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	installs := []string{"pre-commit"}
	if start, _ := yamlBlockLines(lines, preCommitTypes); start >= 0 {
		installs = flowList(strings.TrimPrefix(lines[start], preCommitTypes+":"))
	}
	var out []string
	for _, name := range preCommitIndexStages {
		if slices.Contains(installs, name) {
			continue
		}
		hook, err := s.files.readOptional(filepath.Join(s.gitDir, name))
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(hook, []byte(entryMarks[ManagerPreCommit])) {
			out = append(out, name)
		}
	}
	return out, nil
}

// close releases what detectSetup opened.
func (s hookSetup) close() { s.files.Close() }

// packageHooks reads the object at keys in package.json, mapping hook names
// to commands; ok is false when the file is missing or not JSON. A
// package.json that links out of the worktree, or cannot be read, is an
// error.
func (h *hookFiles) packageHooks(path string, keys ...string) (map[string]string, bool, error) {
	b, err := h.readOptional(path)
	if err != nil || b == nil {
		return nil, false, err
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil, false, nil
	}
	for _, k := range keys {
		obj, _ := v.(map[string]any)
		if v = obj[k]; v == nil {
			return nil, true, nil
		}
	}
	obj, _ := v.(map[string]any)
	if obj == nil {
		return nil, true, nil
	}
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out, true, nil
}

// ManagerLine is what a manager runs for one hook: HookLine without the
// hook's arguments, which lefthook, the pre-commit framework and
// simple-git-hooks do not pass through as "$@" (acolyte needs none).
func ManagerLine(name string) string {
	return guarded(name, "")
}

// Integration is one edit that makes a manager run acolyte's hooks.
type Integration struct {
	// File is the file to edit, relative to the repository root.
	File string `json:"file"`
	// Hooks are the hooks the edit covers.
	Hooks []string `json:"hooks"`
	// Add is the text to add to File.
	Add string `json:"add"`
	// Then is the manager's command to run afterwards, if any.
	Then string `json:"then,omitempty"`
	// Written is true when acolyte made the edit (hooks install --write).
	Written bool `json:"written"`
	// Upgrade marks an edit that puts acolyte's older lines, which ran
	// without checking for acolyte on PATH, inside that check; the hooks
	// run acolyte either way.
	Upgrade bool `json:"upgrade,omitempty"`
	// Manual says why acolyte cannot make the edit itself.
	Manual string `json:"manual,omitempty"`
	// Note is what the team should know about the edit: how acolyte
	// spelled pre-commit's stages, and what that means for the team.
	Note string `json:"note,omitempty"`
	// spelling is how the pre-commit framework entry names its stages.
	spelling stageSpelling
	// jsonKeys locate the object to set Hooks' commands in (package.json),
	// and jsonValue is the command; empty for text edits.
	jsonKeys  []string
	jsonValue string
}

// integrations lists the edits the manager still needs for acolyte's hooks
// to run; hooks whose file or config already runs acolyte need none.
func integrations(r *gitsync.Repo, s hookSetup) ([]Integration, error) {
	var out []Integration
	switch s.manager {
	case ManagerHusky, ManagerHooksFolder:
		for _, name := range gitsync.Hooks {
			path := filepath.Join(s.teamDir, name)
			b, err := s.files.readOptional(path)
			if err != nil {
				return nil, err
			}
			if !runsAcolyte(b, name) {
				out = append(out, Integration{File: r.Rel(path), Hooks: []string{name}, Add: Line(name)})
			}
		}
	case ManagerLefthook:
		b, err := s.files.readOptional(s.config)
		if err != nil {
			return nil, err
		}
		local, err := s.files.readOptional(lefthookLocal(s.config))
		if err != nil {
			return nil, err
		}
		for _, name := range gitsync.Hooks {
			block := yamlBlock(string(b), name) + yamlBlock(string(local), name)
			if !strings.Contains(block, "acolyte hook "+name) {
				out = append(out, Integration{File: r.Rel(s.config), Hooks: []string{name},
					Add: lefthookEntry(name), Then: "lefthook install"})
			}
		}
	case ManagerPreCommit:
		b, err := s.files.readOptional(s.config)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(b, []byte("acolyte hook pre-commit")) || !bytes.Contains(b, []byte("acolyte hook post-merge")) {
			spelling, note := preCommitChoice(string(b))
			out = append(out, Integration{File: r.Rel(s.config), Hooks: gitsync.Hooks, Add: preCommitEntry("", spelling),
				Then: "pre-commit install", Note: note, spelling: spelling})
		}
	case ManagerSimpleGitHooks, ManagerHusky4:
		keys := []string{"simple-git-hooks"}
		then := "npx simple-git-hooks"
		if s.manager == ManagerHusky4 {
			keys, then = []string{"husky", "hooks"}, ""
		}
		hooks, _, err := s.files.packageHooks(s.config, keys...)
		if err != nil {
			return nil, err
		}
		for _, name := range gitsync.Hooks {
			if !strings.Contains(hooks[name], "acolyte hook "+name) {
				value := chainCommand(hooks[name], ManagerLine(name))
				add, _ := marshalNoEscape(value)
				out = append(out, Integration{File: r.Rel(s.config), Hooks: []string{name}, Then: then,
					Add: fmt.Sprintf("%q: %s", name, add), jsonKeys: keys, jsonValue: value})
			}
		}
	}
	legacy, err := legacyIntegrations(r, s)
	return append(out, legacy...), err
}

// chainCommand runs acolyte after a team's command, and only when it passed,
// so the team's failure still blocks the commit: `team; acolyte …` would
// hand git acolyte's status instead.
func chainCommand(team, line string) string {
	if strings.TrimSpace(team) == "" {
		return line
	}
	return team + " && { " + line + "; }"
}

// runsAcolyte says whether a hook script runs acolyte's work for name: a
// line that calls `acolyte hook NAME`, not commented out.
func runsAcolyte(script []byte, name string) bool {
	for _, line := range strings.Split(string(script), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "#") && strings.Contains(line, "acolyte hook "+name) {
			return true
		}
	}
	return false
}

// lefthookLocal is the personal, git-ignored config lefthook merges over
// the team's; a line there runs acolyte for one member only.
func lefthookLocal(config string) string {
	dir, base := filepath.Split(config)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(strings.TrimPrefix(base, "."), ext)
	prefix := ""
	if strings.HasPrefix(base, ".") {
		prefix = "."
	}
	return filepath.Join(dir, prefix+stem+"-local"+ext)
}

func lefthookEntry(name string) string {
	return name + ":\n  commands:\n    acolyte:\n      run: " + ManagerLine(name) + "\n"
}

// PreCommitEntry is the pre-commit framework's repos entry, indented by
// indent, as acolyte writes it into a config that names no stage: in no
// stage name pre-commit 3.2 renamed, so that every release from 3.0 on
// reads it without a word (see preCommitEntry).
func PreCommitEntry(indent string) string { return preCommitEntry(indent, spellNoStage) }

// stageSpelling is how acolyte's pre-commit entry names the commit stage.
// pre-commit 3.2 renamed commit, merge-commit and push to pre-commit,
// pre-merge-commit and pre-push; 3.0 and 3.1 (Debian 12's is 3.0.4)
// reject the whole config over a new name, which blocks every commit of a
// teammate who has them, and 4.x warns on every git operation about an
// old one. preCommitChoice chooses.
type stageSpelling int

const (
	// spellNoStage names no stage: the commit hook has no `stages:` and
	// so runs in every hook type the team installs, where acolyte's
	// OnlyCommitStage check makes it do nothing but in the commit stage.
	spellNoStage stageSpelling = iota
	// spellOld is `commit`, as a team whose config uses the old names has.
	spellOld
	// spellNew is `pre-commit`, as a team on 3.2 or later has.
	spellNew
)

// preCommitMessageFiles matches the commit message file pre-commit passes
// to a hook in the prepare-commit-msg and commit-msg stages (git's
// COMMIT_EDITMSG, or MERGE_MSG for a merge), so that in the commit stage
// the hook gets no file, or only a staged file of the same name; a file in
// the git directory is the sign of a message stage (OtherPreCommitStage).
const preCommitMessageFiles = `(^|/)(COMMIT_EDITMSG|MERGE_MSG)$`

// preCommitEntry is the repos entry, its commit stage spelled as spelling
// says; acolyte-index's stages were never renamed.
func preCommitEntry(indent string, spelling stageSpelling) string {
	commit := []string{
		"      entry: sh -c '" + ManagerLine("pre-commit") + "'",
		"      language: system",
		"      pass_filenames: false",
		"      always_run: true",
		"      stages: [" + preCommitStageName("commit", spelling == spellNew) + "]",
	}
	if spelling == spellNoStage {
		commit = []string{
			"      entry: sh -c '" + guarded("pre-commit", " "+OnlyCommitStage+` "$@"`) + "' --",
			"      language: system",
			"      pass_filenames: true",
			"      always_run: true",
			"      files: '" + preCommitMessageFiles + "'",
		}
	}
	lines := slices.Concat([]string{
		"- repo: local",
		"  hooks:",
		"    - id: acolyte",
		"      name: acolyte project memory",
	}, commit, []string{
		"    - id: acolyte-index",
		"      name: acolyte memory index",
		"      entry: sh -c '" + ManagerLine("post-merge") + "'",
		"      language: system",
		"      pass_filenames: false",
		"      always_run: true",
		"      stages: [" + strings.Join(preCommitIndexStages, ", ") + "]",
	})
	return indent + strings.Join(lines, "\n"+indent) + "\n"
}

// preCommitIndexStages are the hook types acolyte-index runs in, which
// are acolyte's hooks but pre-commit; pre-commit never renamed them.
var preCommitIndexStages = slices.DeleteFunc(slices.Clone(gitsync.Hooks), func(h string) bool { return h == "pre-commit" })

// preCommitTypes is the top-level key `pre-commit install` reads to know
// which hooks to install besides pre-commit.
const preCommitTypes = "default_install_hook_types"

// preCommitDefaultStages is the top-level key that says in which stages
// a hook without its own `stages:` runs; without it, every stage.
const preCommitDefaultStages = "default_stages"

// preCommitOldStages are the stage names pre-commit 3.2 renamed, with
// their new names.
var preCommitOldStages = map[string]string{"commit": "pre-commit", "merge-commit": "pre-merge-commit", "push": "pre-push"}

// preCommitStageName is stage (an old name) as spelled the new way or not.
func preCommitStageName(stage string, modern bool) string {
	if modern && preCommitOldStages[stage] != "" {
		return preCommitOldStages[stage]
	}
	return stage
}

// preCommitStages are the stages pre-commit 3.0 knows, in its order and
// old names: every stage a hook without `stages:` ran in, under any
// release acolyte's entry is valid for.
var preCommitStages = []string{"commit", "merge-commit", "prepare-commit-msg", "commit-msg", "post-commit", "manual", "post-checkout", "push", "post-merge", "post-rewrite"}

// preCommitSpelling says how the team's config spells stages: modern when
// by the names pre-commit 3.2 introduced (a stage or default stage so
// named, or a minimum_pre_commit_version of 3.2 or more), since its team
// needs 3.2 anyway; known is false when the config names no stage at all,
// old or new, and says nothing of the team's pre-commit. (pre-commit 4's
// `pre-commit migrate-config` renames them all at once, acolyte's
// included, after which acolyte writes the new names.)
func preCommitSpelling(doc string) (modern, known bool) {
	inList := ""
	for _, l := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(t, "minimum_pre_commit_version:"); ok {
			if v := strings.Trim(strings.TrimSpace(rest), `"'`); versionAtLeast(v, 3, 2) {
				return true, true
			}
		}
		var names []string
		if item, ok := strings.CutPrefix(t, "- "); ok && inList != "" && len(indentOf(l)) >= len(inList) {
			// An item of a stages list written over several lines.
			names = []string{strings.Trim(strings.TrimSpace(strings.SplitN(item, "#", 2)[0]), `"'`)}
		} else if t != "" && !strings.HasPrefix(t, "#") {
			inList = ""
		}
		for _, key := range []string{"stages:", preCommitDefaultStages + ":", "- stages:"} {
			rest, ok := strings.CutPrefix(t, key)
			if !ok {
				continue
			}
			names = flowList(rest)
			if v := strings.TrimSpace(strings.SplitN(rest, "#", 2)[0]); v == "" {
				inList = indentOf(l)
			}
		}
		for _, name := range names {
			if slices.Contains(slices.Collect(maps.Values(preCommitOldStages)), name) {
				return true, true
			}
			if preCommitOldStages[name] != "" {
				known = true
			}
		}
	}
	return false, known
}

// preCommitChoice is how acolyte's entry in doc spells its stages, and
// what the team should know of it. A config that spells stages has a team
// that lives with its spelling already, so acolyte follows it. One that
// names none says nothing of the team's pre-commit, which may be 3.0 on
// one machine and 4.x on the next: the entry then names no renamed stage,
// unless the team's default_stages (naming none of those either) would
// keep a hook without stages: out of the commit stage, when acolyte falls
// back to `commit`, which every release runs and only 4.x warns about.
func preCommitChoice(doc string) (stageSpelling, string) {
	const migrate = "once everyone on the team has pre-commit 3.2 or later, pre-commit migrate-config renames them all, acolyte's included."
	modern, known := preCommitSpelling(doc)
	switch {
	case modern:
		return spellNew, ""
	case known:
		return spellOld, "acolyte spelled its commit stage `commit`, as the team's config spells its stages, which pre-commit 4 warns is deprecated;\n" + migrate
	}
	if start, _ := yamlBlockLines(strings.Split(doc, "\n"), preCommitDefaultStages); start >= 0 {
		return spellOld, "the team's default_stages leaves out the commit stage, so acolyte named it, the way every pre-commit reads (`commit`, which pre-commit 4 warns is deprecated);\n" + migrate
	}
	return spellNoStage, "the team's config names no stage, so acolyte's entry names none that pre-commit 3.2 renamed and every pre-commit from 3.0 on reads it silently;\n" +
		"acolyte's post-checkout, post-merge and post-rewrite hooks go in each clone's .git/hooks with acolyte hooks install, where pre-commit does not install those types."
}

// flowList reads a YAML flow list of plain or quoted words, `[a, 'b']`
// (a comment after it allowed); nil for anything else.
func flowList(value string) []string {
	value = strings.TrimSpace(value)
	if i := strings.Index(value, "#"); i >= 0 {
		value = strings.TrimSpace(value[:i])
	}
	inner, ok := strings.CutPrefix(value, "[")
	if inner, ok2 := strings.CutSuffix(inner, "]"); ok && ok2 {
		var out []string
		for _, t := range strings.Split(inner, ",") {
			if t = strings.Trim(strings.TrimSpace(t), `"'`); t != "" {
				out = append(out, t)
			}
		}
		return out
	}
	return nil
}

// versionAtLeast compares a dotted version with major.minor.
func versionAtLeast(v string, major, minor int) bool {
	var a, b int
	if n, _ := fmt.Sscanf(v, "%d.%d", &a, &b); n == 0 {
		return false
	}
	return a > major || (a == major && b >= minor)
}

// ManagerFiles are the team's files that run acolyte's hooks through the
// hook manager (the hook scripts or the config acolyte's lines are in), for
// init to name among the files to commit.
func ManagerFiles(ctx context.Context, r *gitsync.Repo) ([]string, error) {
	s, err := detectSetup(ctx, r)
	if err != nil {
		return nil, err
	}
	defer s.close()
	var files []string
	switch s.manager {
	case ManagerHusky, ManagerHooksFolder:
		for _, name := range gitsync.Hooks {
			path := filepath.Join(s.teamDir, name)
			b, err := s.files.readOptional(path)
			if err != nil {
				return nil, err
			}
			if runsAcolyte(b, name) {
				files = append(files, r.Rel(path))
			}
		}
	case ManagerLefthook, ManagerPreCommit, ManagerSimpleGitHooks, ManagerHusky4:
		b, err := s.files.readOptional(s.config)
		if err != nil {
			return nil, err
		}
		if bytes.Contains(b, []byte("acolyte hook ")) {
			files = append(files, r.Rel(s.config))
		}
	}
	return files, nil
}
