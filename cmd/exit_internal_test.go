package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
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

// Every error code cmd/exit.go can give is documented in JSON.md's
// "Errors" table with its exit code, and the table lists no other.
func TestErrorCodesMatchDoc(t *testing.T) {
	section := jsonDocSection(t, "Errors")
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([0-9]) \\|")
	documented := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		exit, _ := strconv.Atoi(m[2])
		documented[m[1]] = exit
	}
	coded := map[string]int{errorCodeUnknown: ExitUsage}
	for _, a := range answers {
		coded[a.code] = a.exit
	}
	for code, exit := range coded {
		if got, ok := documented[code]; !ok || got != exit {
			t.Errorf("code %q exits %d; JSON.md documents it as %d (listed: %v)", code, exit, got, ok)
		}
	}
	for code := range documented {
		if _, ok := coded[code]; !ok {
			t.Errorf("JSON.md documents code %q, which cmd/exit.go never gives", code)
		}
	}
}

// Every warning code warn is given is in JSON.md's Warnings table, and
// the table lists no other.
func TestWarningCodesMatchDoc(t *testing.T) {
	section := jsonDocSection(t, "Warnings")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(section, -1) {
		documented = append(documented, m[1])
	}
	slices.Sort(documented)
	coded := slices.Sorted(slices.Values(warningCodes))
	if !slices.Equal(documented, coded) {
		t.Errorf("JSON.md documents warning codes %v; cmd/warn.go gives %v", documented, coded)
	}
}

// jsonDocSection is the text of JSON.md's "## heading" section.
func jsonDocSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("JSON.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("JSON.md has no %s section", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}
