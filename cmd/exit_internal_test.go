package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/memory"
)

func TestExitCode(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("remember: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, ExitOK},
		{"nothing relevant", fail(errors.New("no memories match")), ExitFail},
		{"unknown id", wrap(memory.ErrNotFound), ExitFail},
		{"content refused", wrap(memory.ErrTooLarge), ExitFail},
		{"secret refused", wrap(memory.ErrSecret), ExitFail},
		{"usage", usage(errors.New("search needs a query")), ExitUsage},
		// What stopped the command outranks a command's own "no".
		{"corrupt under fail", fail(wrap(memory.ErrCorrupt)), ExitUsage},
		{"locked under fail", fail(wrap(memory.ErrDatabaseLocked)), ExitUsage},
		{"disk full", wrap(memory.ErrIO), ExitUsage},
		{"project lock", wrap(gitsync.ErrLocked), ExitUsage},
		{"unreadable file under fail", fail(&fs.PathError{Op: "open", Path: "x", Err: fs.ErrPermission}), ExitUsage},
		{"unclassified", errors.New("something else"), ExitUsage},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("%s: exitCode = %d, want %d", tc.name, got, tc.want)
		}
	}
}
