// Package lazyre compiles a regular expression the first time it is used.
// Every acolyte process, git hooks included, loads the packages that match
// rules, paths and secrets, and most never match one; compiling their
// expressions at start-up cost each process about half a millisecond.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call and returns
// the same *regexp.Regexp on every call. expr must compile.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
