package gitsync

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Trusted is a path that git, as configured for this working tree, runs or
// obeys: a hooks folder, a hook script, or a file it reads as config or
// attributes. The agent's file tools must not write it, or a model could
// make the user's next git command run what it likes without the consent
// run_shell asks for.
type Trusted struct {
	// Path is absolute and clean; it need not exist yet (a config file git
	// would include, a hooks folder git would run from).
	Path string
	// Dir means every file under Path.
	Dir bool
	// Why says what git does with the path, for the refusal.
	Why string
}

// gitHookNames are the hooks git runs (githooks(5)); husky v9 makes a shim
// for each in .husky/_ that runs the script of the same name in .husky/.
var gitHookNames = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
	"pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
	"fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit",
	"post-index-change",
}

// maxIncludeDepth is git's own limit on nested includes (MAX_INCLUDE_DEPTH).
const maxIncludeDepth = 10

// configEntry is one key of one config file, as git lists it.
type configEntry struct {
	origin string // the file it was read from, absolute; "" when not a file
	key    string // lower-cased section and name, as git prints it
	value  string
}

// Trusted asks git what it would run or read as configuration in this
// working tree, from every config source (system, global, local, worktree,
// and every file they include, conditionally or not):
//   - every config file, existing or not, that git reads or would include;
//   - core.attributesFile;
//   - every core.hooksPath any of them sets, and the hooks folder git uses
//     now (git rev-parse --git-path hooks);
//   - for a hooks folder named _ (husky v9), the hook-named scripts in the
//     folder above it, which husky's shims run;
//   - a file in the working tree that a command-valued key (core.fsmonitor,
//     core.pager, diff.external, a filter or merge driver, an alias...) runs;
//   - the configs that the hooks of the pre-commit framework and lefthook,
//     and git-lfs when its filter is set, read from the working tree.
//
// Includes that do not apply now (includeIf on another branch) are followed
// too: the user may switch branch, and the file would be config then.
func (r *Repo) Trusted(ctx context.Context) ([]Trusted, error) {
	entries, err := r.configEntries(ctx, "--list")
	if err != nil {
		return nil, err
	}
	t := trustSet{seen: map[string]bool{}, listed: map[string]bool{}}
	for _, e := range entries {
		if e.origin != "" {
			t.listed[e.origin] = true
		}
	}
	// Includes first, so that an included file's refusal says who includes it.
	if err := r.followIncludes(ctx, &t, entries, 0); err != nil {
		return nil, err
	}
	listed := make([]string, 0, len(t.listed))
	for f := range t.listed {
		listed = append(listed, f)
	}
	sort.Strings(listed)
	for _, f := range listed {
		t.add(f, false, "git reads it as config")
	}
	for _, f := range r.configCandidates() {
		t.add(f, false, "git reads it as config")
	}
	if out, err := r.GitOutput(ctx, nil, "rev-parse", "--git-path", "hooks"); err == nil {
		dir := r.abs(strings.TrimSpace(string(out)))
		t.hooks(dir, "git runs hooks from it")
		r.hookConfigs(&t, dir)
	}
	// Without core.attributesFile git reads the XDG one.
	if xdg := xdgConfigHome(); xdg != "" {
		t.add(filepath.Join(xdg, "git", "attributes"), false, "git reads it as attributes, which choose merge drivers and filters")
	}
	for _, e := range entries {
		if strings.HasPrefix(e.key, "filter.lfs.") {
			t.add(filepath.Join(r.Root, ".lfsconfig"), false, "git-lfs reads it as config ("+e.key+" is set in "+e.source()+")")
			break
		}
	}
	return t.out, nil
}

// maxHookRead bounds how much of a hook is read to learn what it runs.
const maxHookRead = 64 << 10

// hookConfigs adds the files that the hooks in dir read to learn what to
// run, for the hook managers that keep that in the working tree: the
// pre-commit framework (the --config its generated hooks pass) and
// lefthook. A hook that runs the project's own code (make test) runs
// whatever the agent wrote, by design, and is not something a path guard
// can protect.
func (r *Repo) hookConfigs(t *trustSet, dir string) {
	for _, h := range gitHookNames {
		p := filepath.Join(dir, h)
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			continue // nothing git would run, and a FIFO would block the read
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(f, maxHookRead))
		f.Close()
		script := string(b)
		switch {
		case strings.Contains(script, "pre-commit.com") || strings.Contains(script, "hook-impl"):
			cfg := ".pre-commit-config.yaml"
			if _, rest, ok := strings.Cut(script, "--config="); ok {
				if f := strings.FieldsFunc(rest, func(c rune) bool { return c == ' ' || c == ')' || c == '\n' }); len(f) > 0 {
					cfg = strings.Trim(f[0], `"'`)
				}
			}
			t.add(r.abs(cfg), false, "the pre-commit framework's "+h+" hook in "+dir+" runs the commands it lists")
		case strings.Contains(script, "lefthook"):
			for _, name := range lefthookConfigs {
				t.add(filepath.Join(r.Root, name), false, "lefthook's "+h+" hook in "+dir+" runs the commands it lists")
			}
		}
	}
}

// lefthookConfigs are the files lefthook reads its commands from.
var lefthookConfigs = []string{
	"lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml",
	"lefthook-local.yml", "lefthook-local.yaml", ".lefthook-local.yml", ".lefthook-local.yaml",
	".config/lefthook.yml", ".config/lefthook.yaml", "lefthook.toml", ".lefthook.toml", "lefthook.json", ".lefthook.json",
}

// trustSet collects Trusted paths once each.
type trustSet struct {
	seen map[string]bool
	out  []Trusted
	// listed are the files git config --list read, includes that apply
	// now among them; their entries need not be read again.
	listed map[string]bool
}

func (t *trustSet) add(p string, dir bool, why string) bool {
	p = filepath.Clean(p)
	if t.seen[p] {
		return false
	}
	t.seen[p] = true
	t.out = append(t.out, Trusted{Path: p, Dir: dir, Why: why})
	return true
}

// hooks adds a hooks folder and, for husky v9's .husky/_, the scripts its
// shims run.
func (t *trustSet) hooks(dir, why string) {
	t.add(dir, true, why)
	if filepath.Base(dir) != "_" {
		return
	}
	parent := filepath.Dir(dir)
	for _, h := range gitHookNames {
		t.add(filepath.Join(parent, h), false, "the hook shims in "+dir+" (husky) run it as the "+h+" hook")
	}
	if xdg := xdgConfigHome(); xdg != "" {
		t.add(filepath.Join(xdg, "husky", "init.sh"), false, "the hook shims in "+dir+" (husky) run it before every hook")
	}
}

// entry adds what one config entry names.
func (t *trustSet) entry(r *Repo, e configEntry) {
	switch {
	case e.key == "core.hookspath" && e.value != "":
		// Relative to where hooks run: the top of the working tree.
		t.hooks(r.abs(expandHome(e.value)), "git runs hooks from it (core.hooksPath in "+e.source()+")")
	case e.key == "core.attributesfile" && e.value != "":
		t.add(r.abs(expandHome(e.value)), false, "git reads it as attributes, which choose merge drivers and filters (core.attributesFile in "+e.source()+")")
	case isCommandKey(e.key):
		for _, p := range commandPaths(e.value) {
			t.add(r.abs(expandHome(p)), false, "git runs it ("+e.key+" in "+e.source()+")")
		}
	}
}

func (e configEntry) source() string {
	if e.origin == "" {
		return "the command line"
	}
	return e.origin
}

// followIncludes adds what entries name and every file they include,
// reading the files of includes that do not apply now with git config
// --file, which lists a file without evaluating its conditions.
func (r *Repo) followIncludes(ctx context.Context, t *trustSet, entries []configEntry, depth int) error {
	var next []string
	for _, e := range entries {
		t.entry(r, e)
		if !isIncludeKey(e.key) || e.value == "" || e.origin == "" {
			continue
		}
		p := expandHome(e.value)
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(e.origin), p)
		}
		if t.add(p, false, "git includes it as config ("+e.key+" in "+e.origin+")") {
			next = append(next, filepath.Clean(p))
		}
	}
	if depth >= maxIncludeDepth {
		return nil
	}
	for _, f := range next {
		if t.listed[f] {
			continue
		}
		if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
			continue // not there yet: protected by name, nothing to read
		}
		sub, err := r.configEntries(ctx, "--file", f, "--list")
		if err != nil {
			return err
		}
		if err := r.followIncludes(ctx, t, sub, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// configEntries runs git config -z --show-origin with args and parses what
// it lists.
func (r *Repo) configEntries(ctx context.Context, args ...string) ([]configEntry, error) {
	out, err := r.GitOutput(ctx, nil, append([]string{"config", "-z", "--show-origin"}, args...)...)
	if err != nil {
		// git config --list fails on a file it cannot parse; so does every
		// git command there, which then runs nothing from it.
		return nil, fmt.Errorf("list git config to learn what git runs: %w", err)
	}
	var entries []configEntry
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		origin, kv := string(fields[i]), string(fields[i+1])
		key, value, _ := strings.Cut(kv, "\n")
		e := configEntry{key: strings.ToLower(key), value: value}
		if p, ok := strings.CutPrefix(origin, "file:"); ok {
			e.origin = r.abs(p)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// configCandidates are the config files git reads whether or not they
// exist yet, so that creating one is caught too.
func (r *Repo) configCandidates() []string {
	out := []string{filepath.Join(r.CommonDir(), "config"), filepath.Join(r.GitDir(), "config.worktree")}
	if p := os.Getenv("GIT_CONFIG_GLOBAL"); p != "" {
		out = append(out, expandHome(p))
	} else if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	if xdg := xdgConfigHome(); xdg != "" {
		out = append(out, filepath.Join(xdg, "git", "config"))
	}
	if p := os.Getenv("GIT_CONFIG_SYSTEM"); p != "" {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// xdgConfigHome is where git looks for its XDG files (config, attributes).
func xdgConfigHome() string {
	if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
		return xdg
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config")
	}
	return ""
}

// abs makes p absolute the way git does for paths it runs with or reads in
// the working tree: relative to its top.
func (r *Repo) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(r.Root, p)
}

func isIncludeKey(key string) bool {
	if key == "include.path" {
		return true
	}
	return strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path")
}

// isCommandKey says whether git runs key's value as a command.
func isCommandKey(key string) bool {
	switch key {
	case "core.fsmonitor", "core.pager", "core.editor", "core.sshcommand", "core.askpass",
		"sequence.editor", "diff.external", "credential.helper", "gpg.program", "web.browser",
		"interactive.difffilter", "core.alternaterefscommand", "uploadpack.packobjectshook":
		return true
	}
	section, rest, _ := strings.Cut(key, ".")
	name := rest[strings.LastIndexByte(rest, '.')+1:]
	switch section {
	case "alias", "pager":
		return true
	case "diff":
		return name == "command" || name == "textconv"
	case "merge":
		return name == "driver"
	case "filter":
		return name == "clean" || name == "smudge" || name == "process"
	case "credential", "gpg":
		return name == "helper" || name == "program"
	case "difftool", "mergetool", "browser", "man":
		return name == "cmd" || name == "path"
	}
	return false
}

// commandPaths are the words of a command-valued key that name files by
// path: the program, or a script handed to one (sh tools/fsmonitor.sh). A
// bare name is looked up on PATH, outside the working tree.
func commandPaths(value string) []string {
	var out []string
	for _, w := range strings.Fields(strings.TrimPrefix(strings.TrimSpace(value), "!")) {
		w = strings.Trim(w, `"';`)
		if w == "" || w[0] == '-' || strings.Contains(w, "://") {
			continue
		}
		if strings.ContainsRune(w, '/') || strings.HasPrefix(w, "~") {
			out = append(out, w)
		}
	}
	return out
}

// expandHome expands a leading ~/ as git does for paths in config.
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
