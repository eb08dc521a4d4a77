//go:build unix

package cmd

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a session of its own, so that the terminal's
// signals (Ctrl-C in the shell that ran the command) do not reach it.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// yieldProcessor lowers this process to the lowest priority (nice 19). A
// failure leaves it at the priority it had: slower for the user, no
// less correct.
func yieldProcessor() { _ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, 19) }
