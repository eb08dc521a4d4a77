package gitsync

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr the first time it is used. Every acolyte
// process, git hooks included, loads this package, and most never match a
// rule or a secret; compiling twenty expressions at start-up cost each of
// them about half a millisecond.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
