package hooks

import (
	"path/filepath"
	"slices"
	"strings"
)

// OnlyCommitStage is the argument after `acolyte hook pre-commit` in the
// pre-commit framework entry that names no stage (spellNoStage), followed
// by the files pre-commit passes. Such an entry runs in every hook type
// the team installs, so the hook does its work only when OtherPreCommitStage
// finds no sign of another.
const OnlyCommitStage = "--only-commit-stage"

// preCommitStageSigns are the variables pre-commit sets for the hooks it
// runs in one hook type only, with that type; the same in 3.0.4 and 4.7.0
// (commands/run.py). The commit stage sets none of them.
var preCommitStageSigns = []struct{ variable, hookType string }{
	{"PRE_COMMIT_REMOTE_NAME", "pre-push"},
	{"PRE_COMMIT_CHECKOUT_TYPE", "post-checkout"},
	// pre-push and post-checkout, and `pre-commit run --from-ref`: not a commit.
	{"PRE_COMMIT_FROM_REF", "pre-push"},
	{"PRE_COMMIT_IS_SQUASH_MERGE", "post-merge"},
	{"PRE_COMMIT_REWRITE_COMMAND", "post-rewrite"},
	{"PRE_COMMIT_PRE_REBASE_UPSTREAM", "pre-rebase"},
	{"PRE_COMMIT_COMMIT_MSG_SOURCE", "prepare-commit-msg"},
	{"PRE_COMMIT_COMMIT_OBJECT_NAME", "prepare-commit-msg"},
}

// mergeReflogActions start the GIT_REFLOG_ACTION git merge sets (or git
// pull, before it runs merge) for every hook it runs, pre-merge-commit
// among them; git commit sets none, so a commit's own pre-commit hook only
// sees one from a git command that runs git commit itself, and those that
// do (rebase) are ones acolyte's pre-commit hook skips anyway.
var mergeReflogActions = []string{"merge", "pull"}

// OtherPreCommitStage names the hook type pre-commit runs acolyte's
// no-stage entry in, when that is not the commit stage, from pre-commit's
// and git's environment (getenv) and the files pre-commit passed: a
// commit message file, in prepare-commit-msg and commit-msg alone
// (preCommitMessageFiles, isMessageFile). "" means the commit stage, or a stage that
// looks the same: post-commit and manual set nothing of their own, so
// acolyte's work runs there too, on the index the commit just checked
// (nothing to stage), or when asked for by hand as `pre-commit run` asks.
// pre-merge-commit is not the commit stage: acolyte's shims never ran at a
// merge, and its post-merge hook imports what the merge brought.
func OtherPreCommitStage(getenv func(string) string, files []string) string {
	for _, sign := range preCommitStageSigns {
		if getenv(sign.variable) != "" {
			return sign.hookType
		}
	}
	if slices.ContainsFunc(files, isMessageFile) {
		return "commit-msg"
	}
	action := getenv("GIT_REFLOG_ACTION")
	if slices.ContainsFunc(mergeReflogActions, func(prefix string) bool { return action == prefix || strings.HasPrefix(action, prefix+" ") }) {
		return "pre-merge-commit"
	}
	return ""
}

// isMessageFile says whether a file pre-commit passed is git's commit
// message file rather than a staged file of the same name
// (docs/COMMIT_EDITMSG), which the entry's files: pattern matches too: git
// names its own file by the git directory, `.git/COMMIT_EDITMSG` or an
// absolute path (a linked worktree's, a --git-dir's), and a staged file
// is never either, as git tracks nothing under .git and pre-commit passes
// staged files relative to the top.
func isMessageFile(file string) bool {
	return filepath.IsAbs(file) || strings.HasPrefix(filepath.ToSlash(file), ".git/")
}
