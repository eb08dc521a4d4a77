package main_test

// Whole-process benchmarks: each iteration runs the built acolyte binary as
// a user would, so process start, opening the database, loading the
// embedder and importing .acolyte/ are all in the figure.
//
//	go test -run '^$' -bench . -benchtime 20x .

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/internal/pgtest"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/postgres"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

var binary string

func TestMain(m *testing.M) {
	// No background fill outliving a benchmark's temporary home.
	os.Setenv("ACOLYTE_BACKGROUND_FILL", "0")
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		// Only benchmarks live here; a plain go test should not pay for a build.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "acolyte-perf-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "acolyte")
	code := 0
	// Built as .goreleaser.yaml builds a release, so that the start-up
	// measured is the one users get: without cgo (a plain build here links
	// libc dynamically, and the loader runs first), stripped, and without
	// urfave/cli's docs writers.
	build := exec.Command("go", "build", "-trimpath", "-tags", "urfave_cli_no_docs", "-ldflags", "-s -w", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build acolyte: %v\n%s", err, out)
		code = 1
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// facts makes n distinct, plausible project facts. Each word list has about
// forty entries, so a query word matches a few percent of the memories, as
// in a real project, rather than all of them.
func facts(n int) []memory.Memory {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(words string) string {
		f := strings.Fields(words)
		return strings.ReplaceAll(f[r.IntN(len(f))], "_", " ")
	}
	const (
		subjects = `parser cache runTool scheduler billing_job auth_middleware CI_pipeline importer search_index
			webhook_handler rate_limiter session_store config_loader migration_runner queue_worker mailer
			metrics_exporter feature_flags uploader thumbnailer router tokenizer indexer crawler notifier
			payment_gateway audit_log backup_job cron_runner api_client cli dashboard report_builder
			sync_daemon file_watcher lock_manager retry_policy health_check tracer deployer`
		verbs = `retries logs validates batches streams caches rejects migrates signs compresses encrypts
			throttles deduplicates archives schedules indexes parses renders exports imports forwards
			buffers flushes rotates truncates hashes verifies serializes debounces resizes merges splits
			reloads drains queues replays samples polls paginates warms evicts`
		objects = `requests empty_files user_tokens large_uploads config_changes webhook_events database_rows
			error_reports build_artifacts invoices emails thumbnails search_queries audit_entries
			log_lines metrics traces sessions cookies certificates api_keys_metadata pull_requests
			commits releases backups snapshots payloads headers redirects timeouts retries_budget
			cron_jobs locks leases shards partitions replicas indexes checkpoints`
		whens = `on_startup every_five_minutes before_deploys when_the_queue_is_full after_a_failed_login
			during_tests at_midnight_UTC on_Fridays on_shutdown after_each_merge before_each_release
			when_disk_is_low on_every_request in_staging_only in_production_only behind_a_feature_flag`
	)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]memory.Memory, n)
	for i := range out {
		out[i] = memory.Memory{
			ID:        memory.NewID(now.Add(time.Duration(i) * time.Second)),
			Kind:      memory.KindStored,
			Content:   fmt.Sprintf("The %s %s %s %s (see note %d)", pick(subjects), pick(verbs), pick(objects), pick(whens), i),
			Source:    "bench",
			CreatedAt: now, UpdatedAt: now,
		}
	}
	return out
}

func run(b *testing.B, dir, home string, args ...string) {
	b.Helper()
	runRSS(b, dir, home, args...)
}

// runRSS runs acolyte as run does and returns its peak resident memory.
func runRSS(b *testing.B, dir, home string, args ...string) int64 {
	b.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ACOLYTE_HOME="+home, "GEMINI_API_KEY=", "GOOGLE_API_KEY=")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("acolyte %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return maxRSS(cmd)
}

func gitRepo(b *testing.B, dir string) {
	b.Helper()
	for _, args := range [][]string{{"init", "-q", dir}, {"-C", dir, "commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// BenchmarkProcessBaseline: `acolyte --version`, the fixed cost of starting
// the binary (the Go runtime and every linked package's init, the Gemini
// SDK's dependency tree above all) that every command below pays too.
func BenchmarkProcessBaseline(b *testing.B) {
	dir, home := b.TempDir(), b.TempDir()
	for b.Loop() {
		run(b, dir, home, "--version")
	}
}

// BenchmarkSearchProcess: a whole `acolyte search` process over n user
// memories, outside any repository.
func BenchmarkSearchProcess(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			home := userHome(b, n)
			dir := b.TempDir()
			// The first search after a write rebuilds the catalog; that
			// case is BenchmarkSearchAfterWrite. Here the store is at rest,
			// so every iteration is the usual search and ns/op its median.
			run(b, dir, home, "search", "--limit", "5", "how does the cache handle large uploads")
			b.ResetTimer()
			var peak int64
			for b.Loop() {
				peak = max(peak, runRSS(b, dir, home, "search", "--limit", "5", "how does the cache handle large uploads"))
			}
			b.ReportMetric(float64(peak)/(1<<20), "maxrss-MB/op")
		})
	}
}

// BenchmarkSearchAfterWrite: a whole `acolyte search` process over 10k user
// memories right after another process remembered one more, so the search
// catalog must be brought up to date first.
func BenchmarkSearchAfterWrite(b *testing.B) {
	home := userHome(b, 10_000)
	dir := b.TempDir()
	run(b, dir, home, "search", "--limit", "5", "how does the cache handle large uploads")
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		run(b, dir, home, "remember", "--scope", "user", fmt.Sprintf("the uploader retries large uploads %d times", i))
		b.StartTimer()
		run(b, dir, home, "search", "--limit", "5", "how does the cache handle large uploads")
	}
}

// projectWith makes a repository whose .acolyte/ holds n memories and a
// home whose index already matches it.
func projectWith(b *testing.B, n int) (repo, home string, mems []memory.Memory) {
	repo, home = b.TempDir(), b.TempDir()
	gitRepo(b, repo)
	mems = facts(n)
	if err := format.WriteFile(format.MemoriesPath(repo), mems); err != nil {
		b.Fatal(err)
	}
	run(b, repo, home, "list", "--limit", "1")
	return repo, home, mems
}

// BenchmarkHookNothingChanged: a post-merge hook run, whole process, when
// .acolyte/ did not change, with 10k project memories.
func BenchmarkHookNothingChanged(b *testing.B) {
	repo, home, _ := projectWith(b, 10_000)
	// A file changed within the last two seconds is hashed on every run,
	// since its stat cannot yet be trusted (gitsync's settleTime); here,
	// as after a merge that did not touch .acolyte/, it has been at rest.
	time.Sleep(2 * time.Second)
	run(b, repo, home, "hook", "post-merge")
	for b.Loop() {
		run(b, repo, home, "hook", "post-merge")
	}
}

// BenchmarkReindexOneChanged: a post-merge hook run, whole process, after
// one of 10k project memories changed.
func BenchmarkReindexOneChanged(b *testing.B) {
	repo, home, mems := projectWith(b, 10_000)
	original := mems[5000].Content
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		mems[5000].Content = fmt.Sprintf("%s, edited %d", original, i)
		if err := format.WriteFile(format.MemoriesPath(repo), mems); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		run(b, repo, home, "hook", "post-merge")
	}
}

// BenchmarkReindexAll: a whole `acolyte reindex --all` process over 10k
// user memories: every memory embedded again, as after a change of the
// built-in embedder's model.
func BenchmarkReindexAll(b *testing.B) {
	home := userHome(b, 10_000)
	dir := b.TempDir()
	for b.Loop() {
		run(b, dir, home, "reindex", "--all")
	}
}

// BenchmarkFreshCloneFirstSearch: the first `acolyte search` in a checkout
// with 10k project memories and an empty index, as after git clone.
func BenchmarkFreshCloneFirstSearch(b *testing.B) {
	repo, _, _ := projectWith(b, 10_000)
	for b.Loop() {
		b.StopTimer()
		home := b.TempDir()
		b.StartTimer()
		run(b, repo, home, "search", "how does the cache handle large uploads")
	}
}

// BenchmarkProjectRemember: a whole `acolyte remember` process storing one
// more project memory in a checkout that already holds n, with the index
// up to date, as in a working session.
func BenchmarkProjectRemember(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			repo, home, _ := projectWith(b, n)
			i := 0
			for b.Loop() {
				i++
				run(b, repo, home, "remember", fmt.Sprintf("the uploader retries large uploads %d times before giving up", i))
			}
		})
	}
}

// BenchmarkProjectWritersConcurrent: 8 processes each remembering 50 project
// facts at once in a checkout of 50k, as agents sharing a repository do. It
// reports how many writes failed (on the lock timeout or otherwise), which
// must stay 0, and ns/op is the time for all 400.
func BenchmarkProjectWritersConcurrent(b *testing.B) {
	repo, home, _ := projectWith(b, 50_000)
	round := 0
	for b.Loop() {
		round++
		errs := make(chan error, 8)
		for w := range 8 {
			go func() {
				for i := range 50 {
					cmd := exec.Command(binary, "remember", fmt.Sprintf("writer %d round %d stores fact %d about the cache", w, round, i))
					cmd.Dir = repo
					cmd.Env = append(os.Environ(), "ACOLYTE_HOME="+home, "GEMINI_API_KEY=", "GOOGLE_API_KEY=")
					if out, err := cmd.CombinedOutput(); err != nil {
						errs <- fmt.Errorf("%v: %s", err, out)
						continue
					}
					errs <- nil
				}
			}()
		}
		failed := 0
		for range 8 * 50 {
			if err := <-errs; err != nil {
				failed++
				b.Log(err)
			}
		}
		b.ReportMetric(float64(failed), "failed/op")
	}
}

// BenchmarkFirstImportLarge: the first command in a fresh clone whose
// .acolyte/ holds 141k memories (a 31 MB file), with an empty index. Peak
// memory is reported as maxrss-MB/op.
func BenchmarkFirstImportLarge(b *testing.B) {
	repo, _, _ := projectWith(b, 141_000)
	var peak int64
	for b.Loop() {
		b.StopTimer()
		home := b.TempDir()
		b.StartTimer()
		cmd := exec.Command(binary, "list", "--limit", "1")
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "ACOLYTE_HOME="+home, "GEMINI_API_KEY=", "GOOGLE_API_KEY=")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		peak = max(peak, maxRSS(cmd))
	}
	b.ReportMetric(float64(peak)/(1<<20), "maxrss-MB/op")
}

// BenchmarkSearchTeamOutage: a whole `acolyte search` process over 10k
// user memories with a team database configured that cannot answer,
// against the same search with none, in the same run. In the stopped case
// nothing listens on the team database's port any more (the connection is
// refused at once); in the hung case a server accepts the connection and
// never answers, as a wedged one does. Local search must still answer:
// stopped in at most twice the time of the search without a team database
// (each iteration times both, interleaved, and the medians are compared);
// hung within the one second acolyte waits for a team database before it
// knows its pace (team.PaceMax) plus that search time, not pgx's 5 s
// connect timeout.
func BenchmarkSearchTeamOutage(b *testing.B) {
	home := userHome(b, 10_000)
	dir := b.TempDir()
	search := []string{"search", "--limit", "5", "how does the cache handle large uploads"}
	team := func(url string) []string { return append([]string{"--team-db", url, "--team", "platform"}, search...) }
	timed := func(args []string) time.Duration {
		start := time.Now()
		run(b, dir, home, args...)
		return time.Since(start)
	}
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}

	b.Run("team=stopped", func(b *testing.B) {
		closed, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		stopped := team(fmt.Sprintf("postgres://alice@%s/acolyte?sslmode=disable", closed.Addr()))
		closed.Close()
		run(b, dir, home, search...)
		var none, down []time.Duration
		for b.Loop() {
			none = append(none, timed(search))
			down = append(down, timed(stopped))
		}
		n, d := median(none), median(down)
		b.ReportMetric(float64(n.Microseconds())/1e3, "ms-no-team")
		b.ReportMetric(float64(d.Microseconds())/1e3, "ms-team-stopped")
		b.ReportMetric(float64(d)/float64(n), "ratio")
		if d > 2*n {
			b.Errorf("with the team database stopped a search takes %v (median), more than twice the %v without one", d, n)
		}
	})
	b.Run("team=hung", func(b *testing.B) {
		hung, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		var mu sync.Mutex
		var held []net.Conn
		go func() {
			for {
				c, err := hung.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				held = append(held, c) // read nothing, answer nothing
				mu.Unlock()
			}
		}()
		b.Cleanup(func() {
			hung.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range held {
				c.Close()
			}
		})
		args := team(fmt.Sprintf("postgres://alice@%s/acolyte?sslmode=disable", hung.Addr()))
		var none, down []time.Duration
		for b.Loop() {
			none = append(none, timed(search))
			down = append(down, timed(args))
		}
		n, d := median(none), median(down)
		b.ReportMetric(float64(n.Microseconds())/1e3, "ms-no-team")
		b.ReportMetric(float64(d.Microseconds())/1e3, "ms-team-hung")
		if d > time.Second+2*n {
			b.Errorf("with a hung team database a search takes %v (median), more than acolyte's 1 s wait and the %v search", d, n)
		}
	})
}

// BenchmarkTeamWritersConcurrent: 8 acolyte processes, each a member on
// its own machine (its own ACOLYTE_HOME), each remembering 200 distinct
// team facts at once against one real PostgreSQL server. Every write must
// succeed and every fact must be there afterwards, once, in the writer's
// name: it fails otherwise. ns/op is the wall time of all 1600.
func BenchmarkTeamWritersConcurrent(b *testing.B) {
	const writers, each = 8, 200
	srv := pgtest.Start(b)
	srv.Admin(b, "postgres", "CREATE ROLE writer LOGIN")
	for b.Loop() {
		b.StopTimer()
		db := srv.NewDatabase(b)
		if _, err := postgres.Init(context.Background(), srv.URL("postgres", db), "bench"); err != nil {
			b.Fatal(err)
		}
		if _, err := postgres.Grant(context.Background(), srv.URL("postgres", db), "bench", "writer"); err != nil {
			b.Fatal(err)
		}
		homes := make([]string, writers)
		for w := range homes {
			homes[w] = b.TempDir()
		}
		dir := b.TempDir()
		b.StartTimer()
		errs := make(chan error, writers*each)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					cmd := exec.Command(binary, "remember", "--scope", "team",
						fmt.Sprintf("writer %d stores team fact %d: the cache of shard %d is warmed before deploys", w, i, w*each+i))
					cmd.Dir = dir
					cmd.Env = append(os.Environ(), "ACOLYTE_HOME="+homes[w], "ACOLYTE_EMBEDDER=static", "GEMINI_API_KEY=", "GOOGLE_API_KEY=",
						"ACOLYTE_TEAM_DB="+srv.URL("writer", db), "ACOLYTE_TEAM=bench")
					if out, err := cmd.CombinedOutput(); err != nil {
						errs <- fmt.Errorf("writer %d fact %d: %v: %s", w, i, err, out)
					}
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		close(errs)
		failed := 0
		for err := range errs {
			failed++
			if failed <= 5 {
				b.Log(err)
			}
		}
		conn, err := pgx.Connect(context.Background(), srv.URL("postgres", db))
		if err != nil {
			b.Fatal(err)
		}
		var rows, distinct, theirs int
		err = conn.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT content), count(*) FILTER (WHERE author = 'writer')
			FROM team_memories WHERE team = 'bench'`).Scan(&rows, &distinct, &theirs)
		conn.Close(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(failed), "failed/op")
		b.ReportMetric(float64(writers*each-distinct), "lost/op")
		if failed != 0 || rows != writers*each || distinct != writers*each || theirs != writers*each {
			b.Fatalf("%d writes failed; the team holds %d memories, %d distinct, %d by writer; want %d of each",
				failed, rows, distinct, theirs, writers*each)
		}
		b.StartTimer()
	}
}

// userHome is an acolyte home whose store holds n user memories, embedded
// by the default embedder.
func userHome(b *testing.B, n int) string {
	b.Helper()
	home := b.TempDir()
	s, err := sqlite.Open(context.Background(), filepath.Join(home, "acolyte.db"), static.New())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ReplaceScope(context.Background(), memory.ScopeUser, "", facts(n)); err != nil {
		b.Fatal(err)
	}
	return home
}
