package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/internal/bench"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/postgres"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure acolyte",
		Subcommands: []*cli.Command{{
			Name:  "retrieval",
			Usage: "recall@k, nDCG@k and MRR of search on a corpus and its queries",
			Description: "The corpus and queries are JSON Lines files in the format of shared/bench/README.md.\n" +
				"Each group becomes its own project in a fresh store, indexed and searched with the same code as acolyte search.\n" +
				"With --team-db URL the benchmark runs through the team database instead: each group becomes its own team,\n" +
				"named --team (default bench), a dash and the group; run it as a role that may create roles (team init's),\n" +
				"in a database where those teams are empty.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "corpus", Required: true, Usage: "corpus.jsonl"},
				&cli.StringFlag{Name: "queries", Required: true, Usage: "queries.jsonl"},
				&cli.StringFlag{Name: "k", Value: "5,10", Usage: "comma-separated cut-offs"},
				&cli.StringFlag{Name: "db", Usage: "keep the benchmark store in this file (default: a temporary one)"},
				&cli.StringFlag{Name: "method", Value: "fused", Usage: "search by `fused`, lexical or vector evidence"},
				&cli.BoolFlag{Name: "no-floor", Usage: "return the best matches even when none is relevant"},
				&cli.BoolFlag{Name: "no-paths", Usage: "ask each query without the files at hand its paths name, by meaning alone"},
				&cli.BoolFlag{Name: "only-path", Usage: "keep only the memories scoped to a query's paths, as search --only-path"},
				&cli.StringFlag{Name: "headings", Usage: "file each memory under its section headings, from this JSON Lines `FILE` of {\"id\", \"headings\"}, as the AGENTS.md import does"},
				jsonFlag,
			},
			Action: runRetrievalBench,
		}},
	}
}

func runRetrievalBench(c *cli.Context) error {
	var ks []int
	for _, f := range strings.Split(c.String("k"), ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k <= 0 {
			return usage(fmt.Errorf("--k %q: give positive whole numbers, e.g. 5,10", c.String("k")))
		}
		ks = append(ks, k)
	}
	method, err := memory.ParseMethod(c.String("method"))
	if err != nil {
		return usage(fmt.Errorf("--method: %w", err))
	}
	opts := bench.Options{Method: method, NoFloor: c.Bool("no-floor"), NoPaths: c.Bool("no-paths"), OnlyPath: c.Bool("only-path")}
	docs, err := bench.ReadJSONL[bench.Doc](c.String("corpus"))
	if err != nil {
		return usage(err)
	}
	queries, err := bench.ReadJSONL[bench.Query](c.String("queries"))
	if err != nil {
		return usage(err)
	}
	if len(docs) == 0 || len(queries) == 0 {
		return usage(errors.New("the corpus and the queries must each hold at least one line"))
	}
	if path := c.String("headings"); path != "" {
		if err := fileUnderHeadings(docs, path); err != nil {
			return usage(err)
		}
	}
	if url := global(c, flagTeamDB); url != "" {
		if c.String("db") != "" {
			return usage(errors.New("--db names a local benchmark store and --team-db a team database; give one"))
		}
		return runTeamBench(c, url, docs, queries, ks, opts)
	}
	path := c.String("db")
	if path == "" {
		dir, err := os.MkdirTemp("", "acolyte-bench-")
		if err != nil {
			return usage(err)
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "bench.db")
	}
	e, err := chooseEmbedder(c)
	if err != nil {
		return err
	}
	s, err := sqlite.Open(c.Context, path, e)
	if err != nil {
		return err
	}
	defer s.Close()

	bar := newProgress(c.App.ErrWriter, "index ")
	indexTime, err := bench.Index(c.Context, s, docs, bar.Update)
	bar.Done()
	if err != nil {
		return err
	}
	bar = newProgress(c.App.ErrWriter, "search")
	r, err := bench.Run(c.Context, s, queries, ks, opts, bar.Update)
	bar.Done()
	if err != nil {
		return err
	}
	err = crossRun(c, &r, docs, queries, indexTime, opts, func(opts bench.Options, progress func(done, total int)) (bench.Report, error) {
		return bench.Run(c.Context, s, queries, ks, opts, progress)
	})
	if err != nil {
		return err
	}
	return printRetrieval(c, r, ks)
}

// crossRun completes r: when the queries name several groups, every
// query is asked again of another group's memories, where the right
// answer is nothing.
func crossRun(c *cli.Context, r *bench.Report, docs []bench.Doc, queries []bench.Query, indexTime time.Duration, opts bench.Options,
	run func(bench.Options, func(done, total int)) (bench.Report, error)) error {
	r.Memories, r.IndexTime, r.Method = len(docs), indexTime, c.String("method")
	groups := map[string]bool{}
	for _, q := range queries {
		groups[q.Group] = true
	}
	if len(groups) > 1 {
		opts.Cross = true
		bar := newProgress(c.App.ErrWriter, "cross ")
		cross, err := run(opts, bar.Update)
		bar.Done()
		if err != nil {
			return err
		}
		r.CrossEmpty = &cross.Empty
	}
	return nil
}

// runTeamBench is bench retrieval through the team database at url.
func runTeamBench(c *cli.Context, url string, docs []bench.Doc, queries []bench.Query, ks []int, opts bench.Options) error {
	prefix := global(c, flagTeam)
	if prefix == "" {
		prefix = "bench"
	}
	teams, order, err := bench.TeamNames(prefix, docs, postgres.CheckTeam)
	if err != nil {
		return usage(fmt.Errorf("--team %q: %w", prefix, err))
	}
	for _, team := range order {
		if _, err := postgres.Init(c.Context, url, team); err != nil {
			return err
		}
	}
	e, err := chooseEmbedder(c)
	if err != nil {
		return err
	}
	ts, err := postgres.Open(c.Context, url, e)
	if err != nil {
		return err
	}
	defer ts.Close()
	bar := newProgress(c.App.ErrWriter, "index ")
	t, indexTime, err := bench.IndexTeam(c.Context, ts, e, teams, docs, bar.Update)
	bar.Done()
	if err != nil {
		return err
	}
	bar = newProgress(c.App.ErrWriter, "search")
	r, err := bench.RunTeam(c.Context, t, queries, ks, opts, bar.Update)
	bar.Done()
	if err != nil {
		return err
	}
	err = crossRun(c, &r, docs, queries, indexTime, opts, func(opts bench.Options, progress func(done, total int)) (bench.Report, error) {
		return bench.RunTeam(c.Context, t, queries, ks, opts, progress)
	})
	if err != nil {
		return err
	}
	return printRetrieval(c, r, ks)
}

func printRetrieval(c *cli.Context, r bench.Report, ks []int) error {
	if c.Bool("json") {
		return printJSON(c, r)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "embedder   %s\n", orNone(r.Embedder))
	fmt.Fprintf(w, "memories   %d (indexed in %s)\n", r.Memories, r.IndexTime.Round(1e6))
	fmt.Fprintf(w, "method     %s\n", r.Method)
	fmt.Fprintf(w, "queries    %d (%.1f%% found nothing, %.1f results on average)\n", r.Queries, 100*r.Empty, r.Returned)
	if r.CrossEmpty != nil {
		fmt.Fprintf(w, "cross      %.1f%% of the queries found nothing in another group's memories\n", 100**r.CrossEmpty)
	}
	for _, k := range ks {
		fmt.Fprintf(w, "recall@%-3d %.4f   nDCG@%-3d %.4f\n", k, r.Recall[k], k, r.NDCG[k])
	}
	fmt.Fprintf(w, "MRR        %.4f\n", r.MRR)
	fmt.Fprintf(w, "search     p50 %s  p95 %s\n", r.P50.Round(1e3), r.P95.Round(1e3))
	cats := make([]int, 0, len(r.ByCategory))
	for cat := range r.ByCategory {
		cats = append(cats, cat)
	}
	sort.Ints(cats)
	for _, cat := range cats {
		fmt.Fprintf(w, "  category %d recall@%d %.4f\n", cat, ks[0], r.ByCategory[cat])
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none (lexical only)"
	}
	return s
}

// fileUnderHeadings gives each document the topic the AGENTS.md import
// would give a rule under the headings the file lists for it.
func fileUnderHeadings(docs []bench.Doc, path string) error {
	lines, err := bench.ReadJSONL[bench.Headings](path)
	if err != nil {
		return err
	}
	at := make(map[string]int, len(docs))
	for i, d := range docs {
		at[d.ID] = i
	}
	for _, l := range lines {
		i, ok := at[l.ID]
		if !ok {
			return fmt.Errorf("%s: id %q is not in the corpus; give the headings of this corpus", path, l.ID)
		}
		docs[i].Topic = derive.TopicFromHeadings(l.Headings)
	}
	return nil
}
