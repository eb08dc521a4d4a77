package gitsync

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/internal/stalememo"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// packedHistory writes, through git fast-import, a repository of files
// folders deep that years of small commits changed, packed as git gc and
// a clone's pack do: trees and blobs stored as deltas, up to 50 deep.
func packedHistory(b testing.TB, files, commits int) string {
	b.Helper()
	root := b.TempDir()
	gittest.Run(b, root, "init", "-q", "-b", "main")
	path := func(i int) string { return fmt.Sprintf("pkg%02d/sub%02d/file%04d.go", i%40, i/40%10, i) }
	var stream strings.Builder
	blob := func(p, content string) {
		fmt.Fprintf(&stream, "M 100644 inline %s\ndata %d\n%s\n", p, len(content), content)
	}
	body := func(i, version int) string {
		return fmt.Sprintf("package pkg\n\n// version %d\n%s", version, strings.Repeat(fmt.Sprintf("func f%d() int { return %d }\n", i, i), 60))
	}
	for c := range commits {
		msg := fmt.Sprintf("change %d", c)
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\ncommitter t <t@example.com> %d +0000\ndata %d\n%s\n", c+1, 1_600_000_000+c*3600, len(msg), msg)
		if c > 0 {
			fmt.Fprintf(&stream, "from :%d\n", c)
		}
		if c == 0 {
			for i := range files {
				blob(path(i), body(i, 0))
			}
			continue
		}
		for k := range 4 {
			i := (c*7919 + k*104729) % files
			blob(path(i), body(i, c))
		}
	}
	if out, err := gittest.TryInput(root, stream.String(), "fast-import", "--quiet"); err != nil {
		b.Fatalf("git fast-import: %v %s", err, out)
	}
	gittest.Run(b, root, "checkout", "-q", "main")
	// fast-import stores each version as a delta of the one before it,
	// the newest at the end of the longest chain; git's own packing (gc,
	// a clone's pack) bases deltas on the newest instead, which -f redoes.
	gittest.Run(b, root, "repack", "-q", "-a", "-d", "-f", "--depth=50", "--window=10")
	return root
}

// citedSpecs is n "<commit>:<path>" a page of search hits cites: commits
// spread over the last span of the history, paths over the tree.
func citedSpecs(b *testing.B, root string, n, span int) []string {
	b.Helper()
	commits := strings.Fields(gittest.Run(b, root, "rev-list", fmt.Sprintf("--max-count=%d", span), "HEAD"))
	paths := strings.Fields(gittest.Run(b, root, "ls-tree", "-r", "--name-only", "HEAD"))
	specs := make([]string, n)
	for i := range specs {
		specs[i] = commits[i*len(commits)/n] + ":" + paths[(i*7919)%len(paths)]
	}
	return specs
}

// BenchmarkCommittedBlobs is the first look at a page of 20 search hits'
// cited files: "git" asks `git cat-file --batch-check`, as StaleAmong did,
// "in-process" is committedBlobs reading the objects, each call opening
// the repository afresh as a new CLI process does; "kept" reads the
// answers kept ahead of time in a store (keptBlobs). The repository is a
// packed history of 5,000 files and 3,000 commits, or the one
// ACOLYTE_BENCH_REPO names (read, never written). The hits cite 20
// commits among the last 100 ("recent": memories written lately, whose
// trees git stores whole or near it) or among all 3,000 ("spread":
// years of memories, each old tree at the end of a chain of deltas up to
// 50 long). It reports the median call as ms-median.
//
//	go test ./gitsync -run '^$' -bench BenchmarkCommittedBlobs -count 5
func BenchmarkCommittedBlobs(b *testing.B) {
	root := os.Getenv("ACOLYTE_BENCH_REPO")
	if root == "" {
		root = packedHistory(b, 5_000, 3_000)
	}
	r, err := Discover(root)
	if err != nil {
		b.Fatal(err)
	}
	for _, span := range []struct {
		name    string
		commits int
	}{{"recent", 100}, {"spread", 5000}} {
		specs := citedSpecs(b, root, 20, span.commits)
		b.Run(span.name, func(b *testing.B) { benchmarkCommittedBlobs(b, r, specs) })
	}
}

func benchmarkCommittedBlobs(b *testing.B, r *Repo, specs []string) {
	want, err := r.GitOutput(b.Context(), []byte(strings.Join(specs, "\n")+"\n"), "cat-file", "--batch-check")
	if err != nil {
		b.Fatal(err)
	}
	median := func(b *testing.B, call func() []string) {
		var took []time.Duration
		for b.Loop() {
			start := time.Now()
			got := call()
			took = append(took, time.Since(start))
			if len(got) != len(specs) {
				b.Fatalf("%d answers for %d paths", len(got), len(specs))
			}
		}
		slices.Sort(took)
		b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
	}
	b.Run("git", func(b *testing.B) {
		median(b, func() []string {
			out, err := r.GitOutput(b.Context(), []byte(strings.Join(specs, "\n")+"\n"), "cat-file", "--batch-check")
			if err != nil {
				b.Fatal(err)
			}
			return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		})
	})
	b.Run("kept", func(b *testing.B) {
		state, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "acolyte.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer state.Close()
		if _, err := r.keptBlobs(b.Context(), state, specs, 0); err != nil {
			b.Fatal(err)
		}
		median(b, func() []string {
			blobs, err := r.keptBlobs(b.Context(), state, specs, keepWait)
			if err != nil {
				b.Fatal(err)
			}
			return blobs
		})
	})
	b.Run("in-process", func(b *testing.B) {
		median(b, func() []string {
			blobs, err := r.committedBlobs(b.Context(), specs)
			if err != nil {
				b.Fatal(err)
			}
			for i, line := range strings.Split(strings.TrimSuffix(string(want), "\n"), "\n") {
				if oid, kind, _ := strings.Cut(line, " "); strings.HasPrefix(kind, "blob ") != (blobs[i] != "") || blobs[i] != "" && blobs[i] != oid {
					b.Fatalf("%s: in-process %q, git %q", specs[i], blobs[i], line)
				}
			}
			return blobs
		})
	})
}

// BenchmarkFirstLook is the whole staleness check of a CLI search's first
// look at a page of hits (10, search's default limit, or 20), as cmd
// wires it: a new stalememo over the
// store, over StaleByIDKeeping, each call about memories it has not seen,
// each citing a file at a commit among the last 100 ("recent") or all
// 3,000 ("spread") of the packed history of BenchmarkCommittedBlobs.
// "cold" has nothing kept; "blobs-kept" has the cited blobs kept ahead of
// time (KeepCitedBlobs), as the background fill and the servers do. It
// reports the median call as ms-median.
//
//	go test ./gitsync -run '^$' -bench BenchmarkFirstLook -count 4
func BenchmarkFirstLook(b *testing.B) {
	root := packedHistory(b, 5_000, 3_000)
	r, err := Discover(root)
	if err != nil {
		b.Fatal(err)
	}
	paths := strings.Fields(gittest.Run(b, root, "ls-tree", "-r", "--name-only", "HEAD"))
	hourAgo := time.Now().Add(-time.Hour)
	for _, p := range paths {
		if err := os.Chtimes(filepath.Join(root, p), hourAgo, hourAgo); err != nil {
			b.Fatal(err)
		}
	}
	for _, span := range []struct {
		name    string
		commits int
	}{{"recent", 100}, {"spread", 5000}} {
		commits := strings.Fields(gittest.Run(b, root, "rev-list", fmt.Sprintf("--max-count=%d", span.commits), "HEAD"))
		// page is the n-th page of memories: a commit and a path of their
		// own each, past the first few thousand pages.
		page := func(n int) []memory.Memory {
			mems := make([]memory.Memory, 20)
			for i := range mems {
				k := n*20 + i
				mems[i] = memory.Memory{ID: fmt.Sprintf("m%06d", k), Commit: commits[k*7%len(commits)], Paths: []string{paths[k*7919%len(paths)]}}
			}
			return mems
		}
		for _, look := range []struct {
			name  string
			ahead bool
			hits  int
		}{{"cold/hits=10", false, 10}, {"cold/hits=20", false, 20}, {"blobs-kept/hits=10", true, 10}, {"blobs-kept/hits=20", true, 20}} {
			ahead := look.ahead
			b.Run(span.name+"/"+look.name, func(b *testing.B) {
				open := func() *sqlite.Store {
					store, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "acolyte.db"), nil)
					if err != nil {
						b.Fatal(err)
					}
					return store
				}
				store := open()
				defer func() { store.Close() }()
				if ahead {
					var all []memory.Memory
					for n := range 200 {
						all = append(all, page(n)...)
					}
					if err := r.KeepCitedBlobs(b.Context(), store, all); err != nil {
						b.Fatal(err)
					}
				}
				var took []time.Duration
				for n := 0; b.Loop(); n++ {
					if !ahead && n > 0 && n%200 == 0 {
						// Every blob the 200 pages cite is kept by now:
						// a cold look needs a store that kept none.
						store.Close()
						store = open()
					}
					memo := stalememo.NewKeeping(root, store, func(kept stalememo.BatchState) memory.StaleFunc { return r.StaleByIDKeeping(kept) })
					mems := page(n % 200)[:look.hits]
					for i := range mems {
						mems[i].ID = fmt.Sprintf("%s-%d", mems[i].ID, n) // an answer not kept
					}
					start := time.Now()
					if _, err := memo.Stale(b.Context(), mems); err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
			})
		}
	}
}
