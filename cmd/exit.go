package cmd

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/postgres"
)

// Exit codes shared by every command.
const (
	ExitOK    = 0
	ExitFail  = 1 // the command ran and the answer is "no": nothing relevant, stale, an unknown id, input or secret refused
	ExitUsage = 2 // the command could not run: bad flags or arguments, I/O errors, a corrupt or locked database, an unreachable team database
	// ExitRefuse is only for `acolyte hook pre-commit`: the one status the
	// fail-open hook shims pass on to git, so that it blocks the commit.
	ExitRefuse = gitsync.ExitRefuse
)

// errNo and errUsage mark what a command decided itself; fail and usage
// attach them. exitCode reads them, and the domain's own sentinels, to
// choose the exit code.
var (
	errNo           = errors.New("the answer is no")
	errNoMatch      = errors.New("no memories match")
	errUsage        = errors.New("usage error")
	errRefuseCommit = errors.New("the commit is refused")
	// errTeamUnreachable marks a team call that could not reach the team
	// database, or lost it mid-call.
	errTeamUnreachable = errors.New("the team database is unreachable")
)

// marked is an error with a mark that errors.Is finds but Error omits.
type marked struct {
	err  error
	mark error
}

func (m *marked) Error() string   { return m.err.Error() }
func (m *marked) Unwrap() []error { return []error{m.err, m.mark} }

// fail says the command ran and its answer is "no".
func fail(err error) error { return &marked{err, errNo} }

// usage says the command could not run because of how it was called.
func usage(err error) error { return &marked{err, errUsage} }

// refuseCommit says the pre-commit hook blocks the commit.
func refuseCommit(err error) error { return &marked{err, errRefuseCommit} }

// answer is one kind of answer a failed command gives: the error that
// marks it, its stable code in `--json` errors (cmd/JSON.md, "Errors"), and
// its exit code.
type answer struct {
	err  error
	code string
	exit int
}

// answers is the one table of what a failed command answers, checked in
// order. What stopped the command comes first and outranks what it
// concluded, so a corrupt database found while searching exits 2, not 1.
// (A malformed or conflicted .acolyte/ file is not here: to the merge
// driver and to check it is a "no", and any other command returns it
// unmarked.)
var answers = []answer{
	// The command could not run.
	{memory.ErrIO, "io", ExitUsage},
	{memory.ErrCorrupt, "database_corrupt", ExitUsage},
	{memory.ErrDatabaseLocked, "database_locked", ExitUsage},
	{memory.ErrSchemaTooNew, "schema_too_new", ExitUsage},
	{memory.ErrNoTeam, "no_team", ExitUsage},
	{errTeamUnreachable, "team_unreachable", ExitUsage},
	{postgres.ErrConnectionLost, "team_unreachable", ExitUsage},
	{postgres.ErrUnreachable, "team_unreachable", ExitUsage},
	{gitsync.ErrLocked, "project_locked", ExitUsage},
	{exec.ErrNotFound, "tool_missing", ExitUsage},
	{context.Canceled, "canceled", ExitUsage},
	{context.DeadlineExceeded, "timeout", ExitUsage},
	{errUsage, "usage", ExitUsage},
	// The command ran, and the answer is no.
	{errNoMatch, "no_match", ExitFail},
	{memory.ErrAmbiguousID, "ambiguous_id", ExitFail},
	{memory.ErrNotFound, "not_found", ExitFail},
	{gitsync.ErrDerivedKind, toolbox.CodeDerived, ExitFail},
	{memory.ErrEmpty, "empty", ExitFail},
	{memory.ErrTooLarge, "too_large", ExitFail},
	{memory.ErrInvalidText, "invalid_text", ExitFail},
	{memory.ErrSecret, "secret", ExitFail},
	{gitsync.ErrRefused, "refused", ExitFail},
	// The agent ran and the task was not done.
	{agent.ErrStepLimit, "step_limit", ExitFail},
	{agent.ErrTruncated, "truncated", ExitFail},
	{agent.ErrEmptyAnswer, "empty_answer", ExitFail},
	{agent.ErrRepeatedCalls, "repeated_calls", ExitFail},
	{errNo, "no", ExitFail},
}

// errorCodeUnknown is the code of an error nobody classified. It exits 2:
// a command that failed for an unknown reason did not answer.
const errorCodeUnknown = "error"

// classify finds err's kind of answer. An error reading or writing a file
// (fs.PathError) is an I/O error even under fail.
func classify(err error) answer {
	if errors.Is(err, errRefuseCommit) {
		return answer{errRefuseCommit, "commit_refused", ExitRefuse}
	}
	for _, a := range answers {
		if a.exit != ExitUsage {
			var pathErr *fs.PathError
			if errors.As(err, &pathErr) {
				return answer{pathErr, "io", ExitUsage}
			}
		}
		if errors.Is(err, a.err) {
			return a
		}
	}
	return answer{err, errorCodeUnknown, ExitUsage}
}

// exitCode is the one place that maps an error to an exit code.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	return classify(err).exit
}

// errorCode is err's stable code in a --json error.
func errorCode(err error) string { return classify(err).code }
