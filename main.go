// Command acolyte gives coding agents a long-term memory they search instead
// of having it injected into every prompt.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/acolyte-dev/acolyte/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cmd.Run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
