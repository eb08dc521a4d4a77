package cmd

import (
	"math"
	"runtime/debug"
	"testing"
)

// A command that exits soon runs with no collection, its heap held by the
// memory limit alone; one that keeps running collects at GOGC=400; GOGC
// and GOMEMLIMIT in the environment win over both.
func TestCollectorFollowsTheCommand(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	for command, want := range map[string]int{
		"forget": -1, "hook": -1, "search": -1, "merge-driver": -1, "": -1,
		"mcp": 400, "ui": 400, "run": 400, "chat": 400,
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		collectorFor(command)
		if got := debug.SetGCPercent(100); got != want {
			t.Errorf("%q: GOGC %d, want %d", command, got, want)
		}
		if got := debug.SetMemoryLimit(-1); got != memoryLimit {
			t.Errorf("%q: memory limit %d, want %d", command, got, memoryLimit)
		}
	}
	t.Setenv("GOGC", "50")
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetGCPercent(50)
	debug.SetMemoryLimit(math.MaxInt64)
	collectorFor("forget")
	if got := debug.SetGCPercent(100); got != 50 {
		t.Errorf("with GOGC set: GOGC %d, want it left at 50", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: limit %d, want it left alone", got)
	}
}
