package main_test

// The cost of a change, not of the store (issue #25): whole-process
// benchmarks at 1k, 10k and 100k memories of each path that touches
// .acolyte/. Each reports the median of its iterations as now-ms; with
// ACOLYTE_BENCH_BEFORE naming a binary built from an earlier tree, each
// iteration also times that binary, interleaved with this one on its own
// copy of the same setup, and reports before-ms and their ratio, so both
// are measured under the same load:
//
//	go build -o /tmp/acolyte-before . # on the earlier tree
//	ACOLYTE_BENCH_BEFORE=/tmp/acolyte-before go test -run '^$' -bench Cost -benchtime 10x -timeout 2h .

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

var costSizes = []int{1_000, 10_000, 100_000}

// arm is one binary under test with its own setup.
type arm struct {
	name    string
	bin     string
	iterate func(i int) time.Duration
	times   []time.Duration
	cpu     []time.Duration
}

// cpuSpent is the user and system CPU time of the processes timed and
// timedGit ran (their children, git's hooks, included), which the load of
// other work on a shared machine disturbs far less than wall time.
var cpuSpent time.Duration

// paired runs setup once per binary, then each iteration times every
// binary in turn and reports the medians, in ms, and their ratio.
func paired(b *testing.B, setup func(b *testing.B, bin string) func(i int) time.Duration) {
	arms := []*arm{{name: "now", bin: binary}}
	if before := os.Getenv("ACOLYTE_BENCH_BEFORE"); before != "" {
		arms = append(arms, &arm{name: "before", bin: before})
	}
	for _, a := range arms {
		a.iterate = setup(b, a.bin)
	}
	i := 0
	for b.Loop() {
		i++
		for _, a := range arms {
			cpu := cpuSpent
			a.times = append(a.times, a.iterate(i))
			a.cpu = append(a.cpu, cpuSpent-cpu)
		}
	}
	for _, a := range arms {
		b.ReportMetric(ms(median(a.times)), a.name+"-ms")
		b.ReportMetric(ms(median(a.cpu)), a.name+"-cpu-ms")
	}
	if len(arms) == 2 {
		b.ReportMetric(float64(median(arms[1].times))/float64(median(arms[0].times)), "before/now")
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// timed runs bin in dir with home and PATH leading to bin (for hooks) and
// returns how long it took.
func timed(b *testing.B, bin, dir, home string, args ...string) time.Duration {
	b.Helper()
	return timedProgram(b, bin, bin, dir, home, args...)
}

// timedGit runs git with the same environment as timed.
func timedGit(b *testing.B, bin, dir, home string, args ...string) time.Duration {
	b.Helper()
	return timedProgram(b, "git", bin, dir, home, args...)
}

// timedProgram runs program in dir with bin as acolyte (costEnv) and
// returns its wall time, adding its CPU time to cpuSpent.
func timedProgram(b *testing.B, program, bin, dir, home string, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(program, args...)
	cmd.Dir = dir
	cmd.Env = costEnv(bin, home)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if ps := cmd.ProcessState; ps != nil {
		cpuSpent += ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", program, strings.Join(args, " "), err, out)
	}
	return d
}

// costEnv puts a directory holding bin as `acolyte` first on PATH, so the
// hooks git runs start the binary under test.
func costEnv(bin, home string) []string {
	pathDir := filepath.Join(filepath.Dir(home), filepath.Base(home)+"-bin")
	if _, err := os.Stat(pathDir); err != nil {
		os.MkdirAll(pathDir, 0o755)
		os.Symlink(bin, filepath.Join(pathDir, "acolyte"))
	}
	return append(os.Environ(), "ACOLYTE_HOME="+home, "GEMINI_API_KEY=", "GOOGLE_API_KEY=",
		"PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com")
}

// costProject is a repository with n project memories committed and an
// index that holds them, imported by bin.
func costProject(b *testing.B, bin string, n int) (repo, home string, mems []memory.Memory) {
	b.Helper()
	repo, home = b.TempDir(), b.TempDir()
	gitRepo(b, repo)
	mems = facts(n)
	if err := format.WriteFile(format.MemoriesPath(repo), mems); err != nil {
		b.Fatal(err)
	}
	if n > format.SplitAt {
		// Laid out as acolyte keeps a project that size: split (an
		// earlier build's sync leaves it one file).
		timed(b, bin, repo, home, "sync")
	}
	timedGit(b, bin, repo, home, "add", "-A")
	timedGit(b, bin, repo, home, "commit", "-qm", "memories")
	timed(b, bin, repo, home, "list", "--limit", "1")
	// Settled, as a file is between working sessions (gitsync's settleTime).
	time.Sleep(2100 * time.Millisecond)
	return repo, home, mems
}

func forSizes(b *testing.B, fn func(b *testing.B, n int)) {
	for _, n := range costSizes {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) { fn(b, n) })
	}
}

// BenchmarkCostProjectRemember: `acolyte remember` of one project memory.
func BenchmarkCostProjectRemember(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		paired(b, func(b *testing.B, bin string) func(int) time.Duration {
			repo, home, _ := costProject(b, bin, n)
			return func(i int) time.Duration {
				return timed(b, bin, repo, home, "remember", fmt.Sprintf("the uploader retries large uploads %d times before giving up", i))
			}
		})
	})
}

// BenchmarkCostProjectForget: `acolyte forget` of one project memory from
// the middle of the file.
func BenchmarkCostProjectForget(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		paired(b, func(b *testing.B, bin string) func(int) time.Duration {
			repo, home, mems := costProject(b, bin, n)
			return func(i int) time.Duration {
				return timed(b, bin, repo, home, "forget", mems[(n/2+i)%n].ID)
			}
		})
	})
}

// BenchmarkCostProjectEdit: `acolyte edit` of one project memory from the
// middle of the file.
func BenchmarkCostProjectEdit(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		paired(b, func(b *testing.B, bin string) func(int) time.Duration {
			repo, home, mems := costProject(b, bin, n)
			return func(i int) time.Duration {
				return timed(b, bin, repo, home, "edit", mems[n/2].ID, fmt.Sprintf("the importer batches rows, edit %d", i))
			}
		})
	})
}

// BenchmarkCostUserRemember: `acolyte remember --scope user` beside n user
// memories.
func BenchmarkCostUserRemember(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		paired(b, func(b *testing.B, bin string) func(int) time.Duration {
			home := userHome(b, n)
			dir := b.TempDir()
			timed(b, bin, dir, home, "search", "warm the catalog")
			return func(i int) time.Duration {
				return timed(b, bin, dir, home, "remember", "--scope", "user", fmt.Sprintf("I prefer tabs, note %d", i))
			}
		})
	})
}

// BenchmarkCostCheck: `acolyte check` of a committed file of n memories.
func BenchmarkCostCheck(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		paired(b, func(b *testing.B, bin string) func(int) time.Duration {
			repo, home, _ := costProject(b, bin, n)
			return func(int) time.Duration { return timed(b, bin, repo, home, "check") }
		})
	})
}

// BenchmarkCostFreshClone: the first `acolyte search` with an empty index.
func BenchmarkCostFreshClone(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		paired(b, func(b *testing.B, bin string) func(int) time.Duration {
			repo, _, _ := costProject(b, bin, n)
			return func(int) time.Duration {
				return timed(b, bin, repo, b.TempDir(), "search", "how does the cache handle large uploads")
			}
		})
	})
}

// BenchmarkCostSearch: `acolyte search` over n project memories, nothing
// changed.
func BenchmarkCostSearch(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		paired(b, func(b *testing.B, bin string) func(int) time.Duration {
			repo, home, _ := costProject(b, bin, n)
			return func(int) time.Duration {
				return timed(b, bin, repo, home, "search", "how does the cache handle large uploads")
			}
		})
	})
}

// hookedProject is costProject with acolyte's hooks installed.
func hookedProject(b *testing.B, bin string, n int) (repo, home string, mems []memory.Memory) {
	repo, home, mems = costProject(b, bin, n)
	timed(b, bin, repo, home, "hooks", "install")
	return repo, home, mems
}

// BenchmarkCostHookNoop: the post-checkout hook with nothing changed.
// hello-ms is a hello-world Go binary timed before each run of this build
// on the same repository: the floor of any Go process here, which the
// hook's goal of 10 ms includes.
func BenchmarkCostHookNoop(b *testing.B) {
	hello := helloWorld(b)
	forSizes(b, func(b *testing.B, n int) {
		var floor []time.Duration
		defer func() { b.ReportMetric(ms(median(floor)), "hello-ms") }()
		paired(b, func(b *testing.B, bin string) func(int) time.Duration {
			repo, home, _ := costProject(b, bin, n)
			return func(int) time.Duration {
				if bin == binary {
					cpu := cpuSpent
					floor = append(floor, timedProgram(b, hello, bin, repo, home))
					cpuSpent = cpu // the arm's CPU is the hook's alone
				}
				return timed(b, bin, repo, home, "hook", "post-checkout", "HEAD", "HEAD", "1")
			}
		})
	})
}

// BenchmarkCostCheckout: what a checkout between two branches that differ
// in one memory costs over git's own. git checks out without hooks, and the
// post-checkout hook git would have run (the installed shim, which starts
// acolyte) is then run on the same repository, timed alone: the arms' times
// and CPU are the hook's. git-ms and git-cpu-ms are git's own checkout.
//
// Until stop 30 this timed a hooked checkout less a plain one in another
// clone; the two checkouts of a 22 MB file it subtracted varied by more than
// the hook did, run to run.
func BenchmarkCostCheckout(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		gitTimes, gitCPU := map[string][]time.Duration{}, map[string][]time.Duration{}
		defer func() {
			arms := []string{"now", "before"}
			for i, bin := range []string{binary, os.Getenv("ACOLYTE_BENCH_BEFORE")} {
				if bin != "" {
					b.ReportMetric(ms(median(gitTimes[bin])), arms[i]+"-git-ms")
					b.ReportMetric(ms(median(gitCPU[bin])), arms[i]+"-git-cpu-ms")
				}
			}
		}()
		paired(b, func(b *testing.B, bin string) func(int) time.Duration {
			repo, home, mems := hookedProject(b, bin, n)
			timedGit(b, bin, repo, home, "checkout", "-qb", "other")
			edited := slices.Clone(mems)
			edited[n/2].Content += ", on the other branch"
			writeLayout(b, repo, edited)
			timedGit(b, bin, repo, home, "commit", "-qam", "edit one memory")
			hook := filepath.Join(repo, ".git", "hooks", "post-checkout")
			branches := []string{"other", "master"}
			return func(i int) time.Duration {
				prev := headOf(b, repo)
				cpu := cpuSpent
				gitTimes[bin] = append(gitTimes[bin], timedGit(b, bin, repo, home, "-c", "core.hooksPath=/dev/null", "checkout", "-q", branches[i%2]))
				gitCPU[bin] = append(gitCPU[bin], cpuSpent-cpu)
				cpuSpent = cpu // the arm's CPU is the hook's alone
				return timedProgram(b, hook, bin, repo, home, prev, headOf(b, repo), "1")
			}
		})
	})
}

// writeLayout writes mems as the project's memories, in the layout the
// project has: one file, or a shard for each memory when split.
func writeLayout(b *testing.B, repo string, mems []memory.Memory) {
	b.Helper()
	if _, err := os.Stat(filepath.Join(repo, format.Dir, format.ShardsDir)); err != nil {
		if err := format.WriteFile(format.MemoriesPath(repo), mems); err != nil {
			b.Fatal(err)
		}
		return
	}
	for shard, group := range format.Shard(mems) {
		if err := format.WriteFile(filepath.Join(repo, format.Dir, filepath.FromSlash(format.ShardFile(shard))), group); err != nil {
			b.Fatal(err)
		}
	}
}

// headOf is the commit HEAD names in repo, read untimed.
func headOf(b *testing.B, repo string) string {
	b.Helper()
	out, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// BenchmarkCostCommitRule: `git commit` of a change to one AGENTS.md rule,
// with the pre-commit hook syncing it into n project memories. The file
// holds n memories with the two rules, n-2 stored: at 100k, n stored and
// two rules would pass MaxIndexedMemories, and the hook's sync of the
// worktree would fail on every commit.
func BenchmarkCostCommitRule(b *testing.B) {
	forSizes(b, func(b *testing.B, n int) {
		paired(b, func(b *testing.B, bin string) func(int) time.Duration {
			repo, home, _ := hookedProject(b, bin, n-2)
			agents := filepath.Join(repo, "AGENTS.md")
			write := func(i int) {
				text := fmt.Sprintf("# Rules\n\n- Run the tests with go test, round %d.\n- Wrap errors with %%w.\n", i)
				if err := os.WriteFile(agents, []byte(text), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			write(0)
			timedGit(b, bin, repo, home, "add", "AGENTS.md")
			timedGit(b, bin, repo, home, "commit", "-qm", "rules")
			return func(i int) time.Duration {
				write(i)
				timedGit(b, bin, repo, home, "add", "AGENTS.md")
				return timedGit(b, bin, repo, home, "commit", "-qm", fmt.Sprintf("rule %d", i))
			}
		})
	})
}

// BenchmarkCostVersion: `acolyte --version` against a hello-world Go
// binary, run alternately; hello-ms is the floor of any Go process here.
func BenchmarkCostVersion(b *testing.B) {
	hello := helloWorld(b)
	// hello is an arm of its own, timed in turn with the others.
	arms := []*arm{{name: "hello", bin: hello}, {name: "now", bin: binary}}
	if before := os.Getenv("ACOLYTE_BENCH_BEFORE"); before != "" {
		arms = append(arms, &arm{name: "before", bin: before})
	}
	dir, home := b.TempDir(), b.TempDir()
	for b.Loop() {
		for _, a := range arms {
			cpu := cpuSpent
			args := []string{"--version"}
			if a.name == "hello" {
				args = nil
			}
			a.times = append(a.times, timed(b, a.bin, dir, home, args...))
			a.cpu = append(a.cpu, cpuSpent-cpu)
		}
	}
	for _, a := range arms {
		b.ReportMetric(ms(median(a.times)), a.name+"-ms")
		b.ReportMetric(ms(median(a.cpu)), a.name+"-cpu-ms")
	}
	b.ReportMetric(float64(median(arms[1].times))/float64(median(arms[0].times)), "now/hello")
}

// helloWorld builds a hello-world Go binary the way the binary under test
// is built, and returns its path.
func helloWorld(b *testing.B) string {
	b.Helper()
	src := b.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	hello := filepath.Join(src, "hello")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", hello, "main.go")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GO111MODULE=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build hello: %v\n%s", err, out)
	}
	return hello
}

// BenchmarkCostGitGrowth: how much .git grows over 100 commits that each
// add one project memory (`remember`, then `git commit`), loose as they
// are written and after `git gc`. Each round costs minutes at 100k: run it
// with -benchtime 1x.
func BenchmarkCostGitGrowth(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			repo, home, _ := costProject(b, binary, n)
			timedGit(b, binary, repo, home, "gc", "-q")
			var loose, packed int64
			round := 0
			for b.Loop() {
				// Each round remembers new facts: a repeated one is a
				// duplicate, which changes nothing to commit.
				round++
				start := dirSize(b, filepath.Join(repo, ".git"))
				for i := range 100 {
					timed(b, binary, repo, home, "remember", fmt.Sprintf("the uploader retries large uploads %d times in round %d", i, round))
					timedGit(b, binary, repo, home, "commit", "-qam", fmt.Sprintf("memory %d", i))
				}
				loose = dirSize(b, filepath.Join(repo, ".git")) - start
				timedGit(b, binary, repo, home, "gc", "-q")
				packed = dirSize(b, filepath.Join(repo, ".git")) - start
			}
			b.ReportMetric(float64(loose)/(1<<20), "loose-MiB")
			b.ReportMetric(float64(packed)/(1<<20), "gc-MiB")
		})
	}
}

func dirSize(b *testing.B, dir string) int64 {
	var total int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return total
}
