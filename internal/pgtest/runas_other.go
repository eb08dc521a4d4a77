//go:build !unix

package pgtest

import (
	"os/exec"
	"os/user"
)

// runAs does nothing where there is no root for postgres to refuse.
func runAs(*exec.Cmd, *user.User) {}
