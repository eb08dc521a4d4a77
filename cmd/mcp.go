package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/agent/mcp"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

const (
	flagPrintConfig = "print-config"
	flagCommand     = "command"
	flagHTTP        = "http"
	flagNoToken     = "no-token"
	flagAllowOrigin = "allow-origin"
)

// envMCPToken, when set, is the bearer token `mcp --http` requires instead
// of a random one, so that a client's configuration can keep it.
const envMCPToken = "ACOLYTE_MCP_TOKEN"

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the memory tools to another coding agent over MCP (stdio, or Streamable HTTP with --http)",
		Description: "Claude Code, Codex, Cursor, Gemini CLI and VS Code start this themselves; it speaks MCP on\n" +
			"stdin/stdout and serves memory_search, memory_add, memory_get, memory_update, memory_remove and\n" +
			"memory_list. It serves the repository of the first root the client announces, else the one it\n" +
			"was started in; --repo DIR fixes it. Outside any repository memories go to user scope.\n" +
			"With --http ADDR it serves the same over Streamable HTTP at http://ADDR/mcp, to any number of\n" +
			"sessions, each following its own roots; every request needs the bearer token printed on stderr\n" +
			"(or set in " + envMCPToken + "). Print the setup for a client with --print-config.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: flagPrintConfig, Usage: "print the configuration for `CLIENT` (" +
				strings.Join(mcp.ClientNames(), ", ") + ") on stdout, where it goes on stderr, and exit"},
			&cli.StringFlag{Name: flagCommand, Usage: "with --print-config: start acolyte as `PATH` (default: acolyte, found on PATH; " +
				"give the absolute path for clients started from a desktop, whose PATH may not have it)"},
			&cli.StringFlag{Name: flagHTTP, Usage: "serve Streamable HTTP on `ADDR` (host:port; a bare :port or port binds 127.0.0.1) instead of stdio; with --print-config, print the client's setup for that server"},
			&cli.BoolFlag{Name: flagNoToken, Usage: "with --http on a loopback address: require no bearer token (any local program can then use the memory)"},
			&cli.StringSliceFlag{Name: flagAllowOrigin, Usage: "with --http: also allow browser requests from `ORIGIN` (e.g. https://ide.example.com); loopback origins always are"},
		},
		Action: runMCP,
	}
}

func runMCP(c *cli.Context) error {
	if name := c.String(flagPrintConfig); name != "" {
		return printClientConfig(c, name)
	}
	for _, f := range []string{flagCommand} {
		if c.IsSet(f) {
			return usage(fmt.Errorf("--%s goes with --print-config", f))
		}
	}
	if c.String(flagHTTP) == "" {
		for _, f := range []string{flagNoToken, flagAllowOrigin} {
			if c.IsSet(f) {
				return usage(fmt.Errorf("--%s goes with --http ADDR", f))
			}
		}
	}
	ws, err := openWorkspace(c)
	if err != nil {
		return err
	}
	defer ws.Close()
	defer fillWhileServing(c.Context, ws.Store)()
	defer keepCitedWhileServing(c.Context, ws)()

	// stdout belongs to the protocol; diagnostics go where clients log stderr.
	logger := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := mcp.Options{
		Version:  c.App.Version,
		Root:     ws.Root,
		Embedder: embedderName(ws.Store),
		Logger:   logger,
		Stale:    ws.stale(),
	}
	// No BeforeCall: in a repository the toolkit is a gitsync.Checkout,
	// which re-imports .acolyte/ itself whenever its content changed.
	if !isSet(c, flagRepo) {
		roots := &rootWorkspaces{c: c, store: ws.Store, open: map[string]*workspace{ws.Root: ws}}
		defer roots.Close()
		opts.Open = roots.Open
	}
	host := mcp.NewHost(ws.Toolkit, opts)
	if addr := c.String(flagHTTP); addr != "" {
		return serveMCPHTTP(c, host, addr, logger)
	}
	err = host.Server().Run(c.Context, mcp.Transport(c.App.Reader, c.App.Writer))
	// The client closing stdin, or the user pressing ^C, is how a session ends.
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("mcp: %w", err)
}

func printClientConfig(c *cli.Context, name string) error {
	client, err := mcp.LookupClient(name)
	if err != nil {
		return usage(err)
	}
	command := "acolyte"
	if c.IsSet(flagCommand) {
		// A bare name stays one, for the client to find on its PATH; a
		// relative path would mean nothing in the client's directory.
		if command = c.String(flagCommand); strings.ContainsRune(command, filepath.Separator) || strings.ContainsRune(command, '/') {
			if command, err = filepath.Abs(command); err != nil {
				return usage(fmt.Errorf("--%s: %w", flagCommand, err))
			}
		}
		if strings.TrimSpace(command) == "" {
			return usage(fmt.Errorf("--%s: give the path of the acolyte binary", flagCommand))
		}
	}
	if addr := c.String(flagHTTP); addr != "" {
		// The client connects to a running server instead of starting one.
		if c.IsSet(flagCommand) {
			return usage(fmt.Errorf("--%s names the binary a client starts; with --%s the client connects to a server you start", flagCommand, flagHTTP))
		}
		addr = listenAddr(addr)
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return usage(fmt.Errorf("--%s %s: %w; give host:port, such as 127.0.0.1:8765", flagHTTP, addr, err))
		}
		url := "http://" + addr + mcp.Path
		if _, err := io.WriteString(c.App.ErrWriter, client.HTTPInstructions(url, envMCPToken)); err != nil {
			return err
		}
		_, err = io.WriteString(c.App.Writer, client.HTTPConfig(url, envMCPToken))
		return err
	}
	// Only the config goes to stdout, so `> .mcp.json` writes a valid file.
	if _, err := io.WriteString(c.App.ErrWriter, client.Instructions(command)); err != nil {
		return err
	}
	_, err = io.WriteString(c.App.Writer, client.Config(command))
	return err
}

// rootWorkspaces opens, once each, the workspaces of the roots MCP clients
// announce, all over the one store the server opened; they stay open
// until the server stops, since clients come back to the same roots.
type rootWorkspaces struct {
	c     *cli.Context
	store *sqlite.Store
	mu    sync.Mutex
	open  map[string]*workspace // by directory asked for and by root found
}

func (r *rootWorkspaces) Open(ctx context.Context, dir string) (mcp.Binding, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.open[dir]; ok {
		return mcp.Binding{Toolkit: w.Toolkit, Root: w.Root, Stale: w.stale()}, nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return mcp.Binding{}, fmt.Errorf("%s is not a directory on this machine", dir)
	}
	w, err := bindWorkspace(r.c, r.store, dir, false)
	if err != nil {
		return mcp.Binding{}, err
	}
	if known, ok := r.open[w.Root]; ok {
		if w.Team != nil {
			w.Team.Close()
		}
		w = known // another directory of a repository already open
	}
	r.open[dir], r.open[w.Root] = w, w
	return mcp.Binding{Toolkit: w.Toolkit, Root: w.Root, Stale: w.stale()}, nil
}

// Close closes the team connections of the workspaces it opened; the
// store belongs to the server's own workspace.
func (r *rootWorkspaces) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	closed := map[*workspace]bool{}
	for _, w := range r.open {
		if !closed[w] && w.Team != nil {
			w.Team.Close()
		}
		closed[w] = true
	}
}

// httpShutdown bounds how long the server waits, on ^C, for calls in flight.
const httpShutdown = 5 * time.Second

func serveMCPHTTP(c *cli.Context, host *mcp.Host, addr string, logger *slog.Logger) error {
	addr = listenAddr(addr)
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usage(fmt.Errorf("--%s %s: %w; give host:port, such as 127.0.0.1:8765", flagHTTP, addr, err))
	}
	token := os.Getenv(envMCPToken)
	switch {
	case c.Bool(flagNoToken) && !mcp.Loopback(h):
		return usage(fmt.Errorf("--%s on %s: only a loopback address (127.0.0.1, localhost, [::1]) may serve without a token", flagNoToken, addr))
	case c.Bool(flagNoToken):
		token = ""
	case token == "":
		token = mcp.NewToken()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp --%s: %w", flagHTTP, err)
	}
	url := "http://" + ln.Addr().String() + mcp.Path
	fmt.Fprintf(c.App.ErrWriter, "acolyte mcp: serving MCP (Streamable HTTP) at %s\n", url)
	switch {
	case token == "":
		fmt.Fprintln(c.App.ErrWriter, "no bearer token: any program on this machine can use the memory")
	case os.Getenv(envMCPToken) != "":
		fmt.Fprintf(c.App.ErrWriter, "clients must send Authorization: Bearer $%s\n", envMCPToken)
	default:
		fmt.Fprintf(c.App.ErrWriter, "clients must send Authorization: Bearer %s\n(set %s to choose the token)\n", token, envMCPToken)
	}
	srv := host.HTTPServer(mcp.HTTPOptions{Token: token, Origins: c.StringSlice(flagAllowOrigin), Logger: logger})
	srv.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("mcp --%s: %w", flagHTTP, err)
	case <-c.Context.Done():
	}
	ctx, cancel := context.WithTimeout(context.Background(), httpShutdown)
	defer cancel()
	_ = srv.Shutdown(ctx) // streams left open past the bound are cut
	return nil
}

// listenAddr binds a bare port, or ":port", to 127.0.0.1: serving the
// memory beyond this machine is a choice made by naming the address.
func listenAddr(addr string) string {
	if !strings.Contains(addr, ":") {
		return "127.0.0.1:" + addr
	}
	if strings.HasPrefix(addr, ":") {
		return "127.0.0.1" + addr
	}
	return addr
}
