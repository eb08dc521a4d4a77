// Command acolyte gives coding agents a long-term memory they search instead
// of having it injected into every prompt.
package main

import (
	"context"
	"io"
	"log"
	"os"
	"os/signal"

	"github.com/acolyte-dev/acolyte/cmd"
)

func main() {
	// acolyte never writes with package log; the SDKs it links do, e.g.
	// genai's "Error context deadline exceeded" on a stream timeout, which
	// acolyte reports itself, in words and once.
	log.SetOutput(io.Discard)
	ctx, stop := signal.NotifyContext(context.Background(), cmd.StopSignals...)
	code := cmd.Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
