//go:build windows

package atomicfile

import "golang.org/x/sys/windows"

// Windows cannot fsync a directory; renames there are durable without it.
var errUnsupportedSync = windows.ERROR_ACCESS_DENIED
