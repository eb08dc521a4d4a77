//go:build unix

package toolbox

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// killGroup makes a cancel or a timeout stop the command's whole process
// group, so that `sh -c "make test"` does not leave make's children
// running: SIGTERM first, so they can clean up, then SIGKILL (stopGroup).
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
}

// stopGroup waits up to grace for what is left of a stopped command's
// process group to exit after its SIGTERM, then kills it.
func stopGroup(cmd *exec.Cmd, grace time.Duration) {
	if cmd.Process == nil {
		return
	}
	pgid := cmd.Process.Pid
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
