package hooks

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/acolyte-dev/acolyte/gitsync"
)

// legacyLine matches a line acolyte wrote before its lines checked for
// acolyte on PATH: `acolyte hook NAME [ "$@"] || [ $? -ne 3 ]`, not
// already inside the check. A teammate without acolyte sees "acolyte: not
// found" from it on every commit and checkout (issue 36).
var legacyLine = regexp.MustCompile(`(^|[^ ]|[^n] )acolyte hook ([a-z-]+)( "\$@")? \|\| \[ \$\? -ne ` + fmt.Sprint(gitsync.ExitRefuse) + ` \]`)

// upgradeLegacy puts each legacy line of doc inside the PATH check and
// returns the hooks it changed; every other byte stays.
func upgradeLegacy(doc string) (string, []string) {
	var hooks []string
	out := legacyLine.ReplaceAllStringFunc(doc, func(m string) string {
		sub := legacyLine.FindStringSubmatch(m)
		if strings.HasSuffix(sub[1], "then ") || !slices.Contains(gitsync.Hooks, sub[2]) {
			return m
		}
		if !slices.Contains(hooks, sub[2]) {
			hooks = append(hooks, sub[2])
		}
		return sub[1] + guarded(sub[2], sub[3])
	})
	return out, hooks
}

// upgradeThen is what a manager needs run after its file changed for its
// hooks to change too: simple-git-hooks copies each command into the hook.
var upgradeThen = map[string]string{ManagerSimpleGitHooks: "npx simple-git-hooks"}

// legacyIntegrations are the edits that bring acolyte's lines in the
// manager's files up to date: one per file that still holds a legacy one.
func legacyIntegrations(r *gitsync.Repo, s hookSetup) ([]Integration, error) {
	var files []string
	switch s.manager {
	case ManagerHusky, ManagerHooksFolder:
		for _, name := range gitsync.Hooks {
			files = append(files, filepath.Join(s.teamDir, name))
		}
	case ManagerLefthook:
		files = []string{s.config, lefthookLocal(s.config)}
	case ManagerPreCommit, ManagerSimpleGitHooks, ManagerHusky4:
		files = []string{s.config}
	}
	var out []Integration
	for _, path := range files {
		b, err := s.read(path)
		if err != nil {
			return nil, err
		}
		upgraded, hooks := upgradeLegacy(string(b))
		if len(hooks) == 0 {
			continue
		}
		if s.manager == ManagerPreCommit && slices.Contains(hooks, "post-merge") {
			// Its acolyte-index entry runs `acolyte hook post-merge` in all three stages.
			hooks = slices.DeleteFunc(slices.Clone(gitsync.Hooks), func(h string) bool {
				return h == "pre-commit" && !slices.Contains(hooks, h)
			})
		}
		var lines []string
		for _, l := range strings.Split(upgraded, "\n") {
			if strings.Contains(l, "command -v acolyte") {
				lines = append(lines, strings.TrimSpace(l))
			}
		}
		out = append(out, Integration{File: r.Rel(path), Hooks: hooks, Upgrade: true, Then: upgradeThen[s.manager],
			Add: strings.Join(lines, "\n") + "\n"})
	}
	return out, nil
}
