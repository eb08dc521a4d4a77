package cmd

import (
	"context"
	"errors"
	"io/fs"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/memory"
)

// Exit codes shared by every command.
const (
	ExitOK    = 0
	ExitFail  = 1 // the command ran and the answer is "no": nothing relevant, stale, input or secret refused
	ExitUsage = 2 // the command could not run: bad flags or arguments, I/O errors, a corrupt or locked database
	// ExitRefuse is only for `acolyte hook pre-commit`: the one status the
	// fail-open hook shims pass on to git, so that it blocks the commit.
	ExitRefuse = gitsync.ExitRefuse
)

// errNo and errUsage mark what a command decided itself; fail and usage
// attach them. exitCode reads them, and the domain's own sentinels, to
// choose the exit code.
var (
	errNo           = errors.New("the answer is no")
	errUsage        = errors.New("usage error")
	errRefuseCommit = errors.New("the commit is refused")
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

// couldNotRun are the errors that stop a command from giving any answer:
// the exit code is ExitUsage even when a command marked them with fail.
// (A malformed or conflicted .acolyte/ file is not here: to the merge driver
// and to check it is a "no", and any other command returns it unmarked.)
var couldNotRun = []error{
	errUsage,
	memory.ErrIO,
	memory.ErrCorrupt,
	memory.ErrDatabaseLocked,
	memory.ErrSchemaTooNew,
	memory.ErrNoTeam,
	gitsync.ErrLocked,
	context.Canceled,
	context.DeadlineExceeded,
}

// answeredNo are the errors that are the command's answer: nothing found,
// content refused.
var answeredNo = []error{
	errNo,
	memory.ErrNotFound,
	memory.ErrEmpty,
	memory.ErrTooLarge,
	memory.ErrInvalidText,
	memory.ErrSecret,
	gitsync.ErrRefused,
	// The agent ran and the task was not done.
	agent.ErrStepLimit,
	agent.ErrTruncated,
	agent.ErrEmptyAnswer,
	agent.ErrRepeatedCalls,
}

// exitCode is the one place that maps an error to an exit code. What
// stopped the command outranks what it concluded, so a corrupt database
// found while searching exits 2, not 1. An error nobody classified also
// exits 2: a command that failed for an unknown reason did not answer.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, errRefuseCommit) {
		return ExitRefuse
	}
	for _, target := range couldNotRun {
		if errors.Is(err, target) {
			return ExitUsage
		}
	}
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return ExitUsage
	}
	for _, target := range answeredNo {
		if errors.Is(err, target) {
			return ExitFail
		}
	}
	return ExitUsage
}
