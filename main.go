// Command acolyte gives coding agents a long-term memory they search instead
// of having it injected into every prompt.
package main

import (
	"context"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cmd.Run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
