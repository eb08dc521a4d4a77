package hooks

import "testing"

// The signs are the environments pre-commit 3.0.4 and 4.7.0 give a hook
// in each hook type, as recorded from real runs (git 2.39): the commit
// stage has none of them, and neither have post-commit and manual.
func TestOtherPreCommitStageTellsTheCommitStageFromTheRest(t *testing.T) {
	for _, c := range []struct {
		env   map[string]string
		files []string
		want  string
	}{
		{map[string]string{"PRE_COMMIT": "1", "GIT_INDEX_FILE": ".git/index"}, nil, ""},
		{map[string]string{"PRE_COMMIT": "1", "PRE_COMMIT_COMMIT_MSG_SOURCE": "message"}, []string{".git/COMMIT_EDITMSG"}, "prepare-commit-msg"},
		{map[string]string{"PRE_COMMIT": "1"}, []string{".git/COMMIT_EDITMSG"}, "commit-msg"},
		// A linked worktree's message file, as git names it.
		{map[string]string{"PRE_COMMIT": "1"}, []string{"/src/app/.git/worktrees/topic/COMMIT_EDITMSG"}, "commit-msg"},
		// The commit stage, committing a file of the same name: pre-commit
		// passes it, since the entry's files: matches it, and it is no sign.
		{map[string]string{"PRE_COMMIT": "1", "GIT_INDEX_FILE": ".git/index"}, []string{"docs/COMMIT_EDITMSG"}, ""},
		{map[string]string{"PRE_COMMIT": "1", "GIT_INDEX_FILE": ".git/index"}, []string{"MERGE_MSG", "notes/git/COMMIT_EDITMSG"}, ""},
		{map[string]string{"PRE_COMMIT": "1", "PRE_COMMIT_CHECKOUT_TYPE": "1", "PRE_COMMIT_FROM_REF": "a", "PRE_COMMIT_TO_REF": "b"}, nil, "post-checkout"},
		{map[string]string{"PRE_COMMIT": "1", "PRE_COMMIT_IS_SQUASH_MERGE": "0", "GIT_REFLOG_ACTION": "merge topic"}, nil, "post-merge"},
		{map[string]string{"PRE_COMMIT": "1", "PRE_COMMIT_REWRITE_COMMAND": "amend"}, nil, "post-rewrite"},
		{map[string]string{"PRE_COMMIT": "1", "PRE_COMMIT_REMOTE_NAME": "origin", "PRE_COMMIT_FROM_REF": "a"}, nil, "pre-push"},
		{map[string]string{"PRE_COMMIT": "1", "GIT_REFLOG_ACTION": "merge topic"}, nil, "pre-merge-commit"},
		{map[string]string{"PRE_COMMIT": "1", "GIT_REFLOG_ACTION": "pull origin main"}, nil, "pre-merge-commit"},
		// A commit run by another git command that names itself.
		{map[string]string{"PRE_COMMIT": "1", "GIT_REFLOG_ACTION": "merger"}, nil, ""},
	} {
		if got := OtherPreCommitStage(func(k string) string { return c.env[k] }, c.files); got != c.want {
			t.Errorf("%v %v: %q, want %q", c.env, c.files, got, c.want)
		}
	}
}
