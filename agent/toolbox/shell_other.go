//go:build !unix

package toolbox

import (
	"os/exec"
	"time"
)

func killGroup(*exec.Cmd) {}

func stopGroup(*exec.Cmd, time.Duration) {}
