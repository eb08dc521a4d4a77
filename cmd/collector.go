package cmd

import (
	"os"
	"runtime/debug"
)

// memoryLimit is the soft limit of every acolyte process's heap. The one
// command with a large live heap is the first import of a big project (a
// fresh clone of 141k memories holds about 110 MB); the limit makes the
// collector work there, and only there.
const memoryLimit = 256 << 20

// keepsRunning reports whether a top-level command serves or converses
// until stopped, and so must collect its garbage as it goes.
func keepsRunning(command string) bool {
	switch command {
	case "mcp", "ui", "run", "chat":
		return true
	}
	return false
}

// collectorFor sets the garbage collector for the command about to run,
// unless GOGC or GOMEMLIMIT says otherwise.
//
// Every command but those that keep running exits within seconds, most
// within tens of milliseconds, and allocates less than the memory limit:
// it runs with no collection at all, the limit as its backstop. With a
// collection due at four times the live heap (GOGC=400, as before for
// every command), a forget at 100k memories started one as it read the
// 22 MB file, and the collector's idle mark workers spun on the other
// core until the read was done: 235 against 85 ms of CPU and 180 against
// 115 ms of wall time, medians of 8 alternating runs (GODEBUG=gctrace=1
// showed 132 ms of idle marking for a 22 MB heap). A command that keeps
// running keeps GOGC=400: its live heap is small, and four times it is
// still little memory.
func collectorFor(command string) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	if os.Getenv("GOGC") != "" {
		return
	}
	percent := -1
	if keepsRunning(command) {
		percent = 400
	}
	debug.SetGCPercent(percent)
}
