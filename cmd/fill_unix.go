//go:build unix

package cmd

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own, so that the terminal's
// signals (Ctrl-C in the shell that ran the command) do not reach it.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
