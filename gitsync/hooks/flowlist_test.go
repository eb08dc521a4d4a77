package hooks

import (
	"errors"
	"testing"
)

// A one-line value that is not a whole flow list is the user's to edit: an
// early reader took `pre-push]`, without its opening bracket, for the list
// [pre-push], and would have rewritten the line as if it were one.
func TestPreCommitValuesWithoutTheirOpeningBracketAreLeftToTheUser(t *testing.T) {
	for _, doc := range []string{
		"default_install_hook_types: pre-push]\nrepos:\n  - repo: local\n    hooks: []\n",
		"default_install_hook_types: pre-push, pre-commit]  # team\nrepos:\n  - repo: local\n    hooks: []\n",
		"default_install_hook_types: [pre-push\nrepos:\n  - repo: local\n    hooks: []\n",
		"default_stages: commit, push]\nrepos:\n  - repo: local\n    hooks: []\n",
	} {
		// Spelled as a config that names stages has it: only an entry that
		// names them edits the top level.
		if got, err := addPreCommitEntry(doc, spellOld); !errors.Is(err, errManual) {
			t.Errorf("%q: got %v, want a by-hand edit; wrote\n%s", doc, err, got)
		}
	}
	for _, value := range []string{" pre-push]", "pre-push, pre-commit]", "[pre-push", "pre-push"} {
		if got := flowList(value); got != nil {
			t.Errorf("flowList(%q) = %q, want nil: not a flow list", value, got)
		}
	}
}
