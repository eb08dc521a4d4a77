package cmd

import (
	"os"
	"syscall"
)

// StopSignals are the signals that stop acolyte as Ctrl-C does: SIGTERM is
// what a CI timeout and kill send, SIGHUP what a closed terminal sends. On
// each, a running command's shell processes are stopped and what was
// written is kept.
var StopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
