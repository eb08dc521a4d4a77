//go:build unix

package toolbox

import (
	"os/exec"
	"syscall"
)

// killGroup makes a timeout kill the command's whole process group, so that
// `sh -c "make test"` does not leave make's children running.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
