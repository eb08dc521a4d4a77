//go:build !unix

package main_test

import "os/exec"

// maxRSS is not measured where rusage is not available.
func maxRSS(*exec.Cmd) int64 { return 0 }
