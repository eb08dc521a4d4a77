package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/agent"
	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/internal/termtext"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/postgres"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON", DisableDefaultText: true}

func scopeFlag(usage string) *cli.StringFlag {
	return &cli.StringFlag{Name: "scope", Usage: usage + ": " + strings.Join(names(memory.Scopes), ", ")}
}

func names[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// allowSecretFlag keeps a credential in the user's own user memory, the
// one scope no one else reads; every other scope refuses it regardless.
var allowSecretFlag = &cli.BoolFlag{Name: "allow-secret", Usage: "store a user memory even though it looks like a credential (user scope only)", DisableDefaultText: true}

func rememberCommand() *cli.Command {
	return &cli.Command{
		Name:      "remember",
		Usage:     "store one fact and print its id",
		ArgsUsage: "TEXT...",
		Flags: []cli.Flag{
			scopeFlag("who sees it (default: project inside a repository, else user)"),
			&cli.StringFlag{Name: "topic", Usage: "optional short label to file it under"},
			&cli.StringFlag{Name: "kind", Value: string(memory.KindStored), Usage: "kind: " + strings.Join(names(memory.Kinds), ", ")},
			&cli.GenericFlag{Name: "path", Value: &repeated{}, Usage: "the files it applies to, as a `GLOB` from the repository root (migrations/**, *.tsx, ** for every file); repeat for more"},
			allowSecretFlag,
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			text := strings.Join(c.Args().Slice(), " ")
			if c.NArg() == 0 || text == "-" {
				var err error
				if text, err = readStdin(c, "the fact", `acolyte remember "TEXT"`); err != nil {
					return err
				}
			}
			kind, err := memory.ParseKind(c.String("kind"))
			if err != nil {
				return usage(err)
			}
			w, err := openWorkspace(c)
			if err != nil {
				return err
			}
			defer w.Close()
			scope := memory.ScopeUser
			if w.Repo != nil {
				scope = memory.ScopeProject
			}
			if c.IsSet("scope") {
				if scope, err = memory.ParseScope(c.String("scope")); err != nil {
					return usage(err)
				}
			}
			added, err := w.Toolkit.Add(c.Context, memory.Draft{Content: text, Scope: scope, Kind: kind, Topic: c.String("topic"), Source: "cli",
				Globs: repeatedValues(c, "path"), AllowSecret: c.Bool(allowSecretFlag.Name)})
			if err != nil {
				return err // exitCode tells refused content (1) from a broken store (2)
			}
			if added.Warning != "" {
				warn(c, warnOther, added.Warning)
			}
			if c.Bool("json") {
				return printJSON(c, rememberJSON{added.Memory, added.Existing, added.Warning})
			}
			if added.Existing {
				fmt.Fprintln(c.App.ErrWriter, "already remembered")
				if globs := memory.NormalizeGlobs(repeatedValues(c, "path")); globs != nil && !slices.Equal(globs, added.Memory.Globs) {
					// Nothing was written: say so, or the scope seems kept.
					fmt.Fprintf(c.App.ErrWriter, "warning: the memory already stored is scoped to %s, not to the --path globs given; forget %s and remember it again to change that\n",
						termtext.EscapeText(describeGlobs(added.Memory.Globs)), added.Memory.ID)
				}
			}
			fmt.Fprintln(c.App.Writer, added.Memory.ID)
			return nil
		},
	}
}

// rememberJSON is what remember --json prints (see cmd/JSON.md).
type rememberJSON struct {
	Memory   memory.Memory `json:"memory"`
	Existing bool          `json:"existing"`
	Warning  string        `json:"warning,omitempty"`
}

func forgetCommand() *cli.Command {
	return &cli.Command{
		Name:      "forget",
		Usage:     "remove memories by id (or an unambiguous start of one)",
		ArgsUsage: "ID...",
		Flags:     []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usage(errors.New("forget needs at least one id; `acolyte list` or `acolyte search` shows them"))
			}
			w, err := openWorkspace(c)
			if err != nil {
				return err
			}
			defer w.Close()
			ids, err := resolveIDs(c.Context, w, c.Args().Slice())
			if err != nil {
				return err
			}
			removed, err := w.Toolkit.Remove(c.Context, ids...)
			if err != nil {
				return err // an unknown id is memory.ErrNotFound: exit 1
			}
			if c.Bool("json") {
				return printJSON(c, removed)
			}
			for _, m := range removed {
				fmt.Fprintf(c.App.Writer, "forgot %s\t%s\n", m.ID, termtext.OneLine(m.Content, 80))
			}
			return nil
		},
	}
}

// filterFlags are shared by search and list so both accept the same filters.
func filterFlags() []cli.Flag {
	return []cli.Flag{
		scopeFlag("only this scope"),
		&cli.StringFlag{Name: "kind", Usage: "only this kind: " + strings.Join(names(memory.Kinds), ", ")},
		&cli.StringFlag{Name: "topic", Usage: "only this topic and the topics beneath it (testing keeps testing / unit tests)"},
		jsonFlag,
	}
}

func parseFilter(c *cli.Context) (memory.Filter, error) {
	f := memory.Filter{Topic: c.String("topic"), Limit: c.Int("limit")}
	if f.Limit < 0 {
		return f, usage(fmt.Errorf("--limit %d: the limit is a number of results, 1 or more (0 or no --limit: the default)", f.Limit))
	}
	var err error
	if c.String("scope") != "" {
		if f.Scope, err = memory.ParseScope(c.String("scope")); err != nil {
			return f, usage(err)
		}
	}
	if c.String("kind") != "" {
		if f.Kind, err = memory.ParseKind(c.String("kind")); err != nil {
			return f, usage(err)
		}
	}
	return f, nil
}

// staleMark begins the content of a search result whose cited files
// changed or went since it was written; `acolyte stale` says which.
const staleMark = "[stale] "

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "find memories by meaning",
		ArgsUsage: "QUERY...",
		Flags: append(filterFlags(), &cli.IntFlag{Name: "limit", Value: memory.DefaultLimit, Usage: "most results to print"},
			&cli.GenericFlag{Name: "path", Value: &repeated{}, Usage: "a `FILE` at hand: memories scoped to paths that match it rank first, found whatever the words; repeat for more"},
			&cli.BoolFlag{Name: "only-path", Usage: "keep only the memories scoped to paths that match a --path file (and those that apply everywhere)"}),
		Action: func(c *cli.Context) error {
			query := strings.Join(c.Args().Slice(), " ")
			if strings.TrimSpace(query) == "" {
				return usage(errors.New("search needs a query, e.g. acolyte search how are tests run"))
			}
			f, err := parseFilter(c)
			if err != nil {
				return err
			}
			w, err := openWorkspace(c)
			if err != nil {
				return err
			}
			defer w.Close()
			paths, err := w.relPaths(repeatedValues(c, "path"))
			if err != nil {
				return usage(err)
			}
			results, err := w.Toolkit.Search(c.Context, memory.Query{Text: query, Filter: f, Paths: paths, OnlyPath: c.Bool("only-path")})
			if err != nil {
				return err
			}
			if err := memory.MarkStale(c.Context, results, w.stale()); err != nil {
				// The answer stands without the marks; say they are missing.
				warn(c, warnOther, fmt.Sprintf("could not tell which results are stale: %v", err))
			}
			if c.Bool("json") {
				if results == nil {
					results = []memory.Result{}
				}
				if err := printJSON(c, results); err != nil {
					return err
				}
			}
			if len(results) == 0 {
				// Like grep: finding nothing is an answer, told by the exit code.
				return fail(errNoMatch)
			}
			if c.Bool("json") {
				return nil
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSCORE\tSCOPE\tKIND\tSOURCE\tCONTENT")
			for _, r := range results {
				content := contentCell(c, r.Content)
				if r.Stale != nil {
					// Its files changed since it was written: check them first.
					content = staleMark + content
				}
				fmt.Fprintf(tw, "%s\t%.3f\t%s\t%s\t%s\t%s\n", r.ID, r.Score, r.Scope, r.Kind, termtext.Escape(r.Source), content)
			}
			return tw.Flush()
		},
	}
}

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the memories visible here",
		Flags: append(filterFlags(), &cli.IntFlag{Name: "limit", Usage: "most memories to print (default: all)"}),
		Action: func(c *cli.Context) error {
			f, err := parseFilter(c)
			if err != nil {
				return err
			}
			w, err := openWorkspace(c)
			if err != nil {
				return err
			}
			defer w.Close()
			tk := w.Toolkit
			if f.Scope == memory.ScopeSession && global(c, flagSession) == "" {
				// Without --session, show the last agent session's memories.
				if last, err := w.Store.GetState(c.Context, agent.LastSessionKey); err == nil && last != "" {
					tk = memory.Scoped{Store: w.Store, Visibility: memory.Visibility{SessionKey: last}, Guard: gitsync.RefuseSecret}
				}
			}
			list, err := tk.List(c.Context, f)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if list == nil {
					list = []memory.Memory{}
				}
				return printJSON(c, list)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSCOPE\tKIND\tSOURCE\tCONTENT")
			for _, m := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.ID, m.Scope, m.Kind, termtext.Escape(m.Source), contentCell(c, m.Content))
			}
			return tw.Flush()
		},
	}
}

func reindexCommand() *cli.Command {
	return &cli.Command{
		Name:  "reindex",
		Usage: "embed every memory that has no vector from the current embedder",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "embed every memory again, even those with a current vector"},
			&cli.BoolFlag{Name: "background", Hidden: true, Usage: "make the layered embedder's pending vectors unless another process is, at the lowest priority, silently (what commands start when they leave some)"},
			&cli.BoolFlag{Name: "repair", Usage: "rebuild a damaged local database from every memory that can still be read (project memories come back from .acolyte/), keeping the damaged file as a .bad copy"},
			&cli.StringFlag{Name: "scope", Usage: "team: only the team database's memories (default: the local store's, and the team's when one is configured)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			teamOnly := false
			switch scope := c.String("scope"); scope {
			case "":
			case string(memory.ScopeTeam):
				teamOnly = true
			default:
				return usage(fmt.Errorf("--scope %q: reindex embeds the whole local store at once; pass --scope team for the team's memories only, or no --scope", scope))
			}
			url, team, err := teamSettings(c)
			if err != nil {
				return err
			}
			if teamOnly && url == "" {
				return usage(fmt.Errorf("%w: pass --team-db URL and --team NAME, or set ACOLYTE_TEAM_DB and ACOLYTE_TEAM", memory.ErrNoTeam))
			}
			var repaired *sqlite.Repaired
			if c.Bool("repair") {
				if teamOnly {
					return usage(errors.New("--repair rebuilds the local database; the team database is repaired by its administrator"))
				}
				r, ok, err := repairStore(c)
				if err != nil {
					return err
				}
				if ok {
					repaired = &r
				}
			}
			s, err := openStore(c)
			if err != nil {
				return err
			}
			defer s.Close()
			if c.Bool("background") {
				return runBackgroundFill(c, s)
			}
			out := map[string]any{"model": embedderName(s)}
			if repaired != nil {
				out["repaired"] = repaired
			}
			if !teamOnly {
				bar := newProgress(c.App.ErrWriter, "reindex")
				n, err := s.Reindex(c.Context, c.Bool("all"), bar.Update)
				bar.Done()
				if err != nil {
					return err
				}
				out["embedded"] = n
			}
			// Team memories get this embedder's vectors too, beside those
			// of the other members' embedders.
			if url != "" {
				ts, err := postgres.Open(c.Context, url, s.Embedder())
				if err != nil {
					return err
				}
				defer ts.Close()
				tn, err := ts.Reindex(c.Context, memory.Visibility{Team: team}, c.Bool("all"))
				if err != nil {
					return err
				}
				out["team_embedded"] = tn
			}
			if c.Bool("json") {
				return printJSON(c, out)
			}
			if n, ok := out["embedded"]; ok {
				fmt.Fprintf(c.App.Writer, "embedded %s with %s\n", plural(n.(int), "memory", "memories"), embedderName(s))
			}
			if tn, ok := out["team_embedded"]; ok {
				fmt.Fprintf(c.App.Writer, "embedded %s with %s\n", plural(tn.(int), "team memory", "team memories"), embedderName(s))
			}
			return nil
		},
	}
}

// maxStdinCount bounds how much of an oversized stdin is read to say its
// size: a stream that does not end (remember < /dev/zero) is not waited on.
const maxStdinCount = 64 << 20

// readStdin reads what (the fact, the new text) from stdin, refusing, with
// its real size, more than a memory holds, and saying how to give the
// text when stdin holds none.
func readStdin(c *cli.Context, what, example string) (string, error) {
	// A little more than a memory holds: a file of 8192 bytes and its
	// newline fits, and memory.ValidateContent judges what is read.
	const readMax = memory.MaxContentBytes + 4096
	b, err := io.ReadAll(io.LimitReader(c.App.Reader, readMax+1))
	if err != nil {
		return "", usage(fmt.Errorf("read %s from stdin: %w", what, err))
	}
	if len(b) > readMax {
		n, err := io.Copy(io.Discard, io.LimitReader(c.App.Reader, maxStdinCount))
		size := fmt.Sprintf("%d bytes", int64(len(b))+n)
		if err == nil && n == maxStdinCount {
			size = fmt.Sprintf("more than %d bytes", int64(len(b))+n)
		}
		return "", fmt.Errorf("%w: %s on stdin, the limit is %d; store one fact per memory", memory.ErrTooLarge, size, memory.MaxContentBytes)
	}
	if len(b) == 0 {
		return "", usage(fmt.Errorf("no %s given: pass it as arguments (%s) or on stdin", what, example))
	}
	return string(b), nil
}

func printJSON(c *cli.Context, v any) error {
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// contentCell is a memory's content in a table: cut to fit a line on a
// terminal, whole when stdout is a pipe or a file, where a script reads it.
func contentCell(c *cli.Context, content string) string {
	if f, ok := c.App.Writer.(*os.File); ok && isTerminal(f) {
		return termtext.OneLine(content, 100)
	}
	return termtext.OneLine(content, math.MaxInt)
}

// describeGlobs names where a memory applies, in a message.
func describeGlobs(globs []string) string {
	if len(globs) == 0 {
		return "no paths (it applies wherever its meaning does)"
	}
	return strings.Join(globs, ", ")
}

// repeated is a flag given once per value: a glob holds commas
// (*.{ts,tsx}), so the values are never split on them.
type repeated struct{ values []string }

func (r *repeated) Set(v string) error { r.values = append(r.values, v); return nil }
func (r *repeated) String() string     { return strings.Join(r.values, " ") }

// repeatedValues are the values of the repeated flag name.
func repeatedValues(c *cli.Context, name string) []string {
	if r, ok := c.Generic(name).(*repeated); ok {
		return r.values
	}
	return nil
}

// relPaths are files named on the command line as a path-scoped search
// names them: relative to the repository's root, or outside a repository
// to the current directory.
func (w *workspace) relPaths(files []string) ([]string, error) {
	out := make([]string, 0, len(files))
	for _, f := range files {
		if w.Repo != nil {
			rel, err := w.Repo.RelPath(f)
			if err != nil {
				return nil, fmt.Errorf("--path: %w", err)
			}
			out = append(out, rel)
			continue
		}
		if filepath.IsAbs(f) {
			return nil, fmt.Errorf("--path %s: outside a repository, name files relative to the current directory", f)
		}
		out = append(out, filepath.ToSlash(filepath.Clean(f)))
	}
	return out, nil
}
