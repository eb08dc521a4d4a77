//go:build unix

package pgtest

import (
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// runAs makes cmd run as u: postgres refuses to run as root.
func runAs(cmd *exec.Cmd, u *user.User) {
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
}
