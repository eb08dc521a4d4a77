//go:build unix

package main_test

import (
	"os/exec"
	"runtime"
	"syscall"
)

// maxRSS is the peak resident memory of a finished command, in bytes.
func maxRSS(cmd *exec.Cmd) int64 {
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss // bytes there, kilobytes elsewhere
	}
	return ru.Maxrss << 10
}
