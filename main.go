// Command acolyte gives coding agents a long-term memory they search instead
// of having it injected into every prompt.
package main

import (
	"context"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime/debug"

	"github.com/acolyte-dev/acolyte/cmd"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// Most commands allocate a few megabytes and exit within tens of
		// milliseconds; collecting that garbage costs more than it frees.
		// Long-running ones (mcp, chat) keep a small live heap, so four
		// times it is still little memory.
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The one command with a large live heap is the first import of
		// a big project (a fresh clone of 141k memories holds about
		// 110 MB); without a limit, GOGC=400 let it grow to 630 MB.
		// A soft limit makes the collector work harder only there.
		debug.SetMemoryLimit(256 << 20)
	}
	// acolyte never writes with package log; the SDKs it links do, e.g.
	// genai's "Error context deadline exceeded" on a stream timeout, which
	// acolyte reports itself, in words and once.
	log.SetOutput(io.Discard)
	ctx, stop := signal.NotifyContext(context.Background(), cmd.StopSignals...)
	code := cmd.Run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
