package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
)

// BenchmarkLockWaits16: 16 processes each remembering 10 project facts at
// once in a checkout of 10k, the heaviest contention the lock sees (agents
// and hooks sharing one repository). It reports the median, p95 and
// slowest single `remember` (time spent waiting for the .acolyte/ lock
// dominates) and the failures, which must stay 0. With
// ACOLYTE_BASELINE_BINARY set to another build, the same load runs against
// it in the same benchmark, so the two can be compared in one run.
func BenchmarkLockWaits16(b *testing.B) {
	binaries := []struct{ name, path string }{{"this", binary}}
	if base := os.Getenv("ACOLYTE_BASELINE_BINARY"); base != "" {
		binaries = append(binaries, struct{ name, path string }{"baseline", base})
	}
	for _, bin := range binaries {
		b.Run("binary="+bin.name, func(b *testing.B) {
			// Set up by the binary measured: each build indexes with its
			// own schema.
			repo, home := b.TempDir(), b.TempDir()
			gitRepo(b, repo)
			if err := format.WriteFile(format.MemoriesPath(repo), facts(10_000)); err != nil {
				b.Fatal(err)
			}
			setup := exec.Command(bin.path, "list", "--limit", "1")
			setup.Dir = repo
			setup.Env = append(os.Environ(), "ACOLYTE_HOME="+home, "GEMINI_API_KEY=", "GOOGLE_API_KEY=")
			if out, err := setup.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			round := 0
			for b.Loop() {
				round++
				waits, failed := contendedRemembers(b, bin.path, repo, home, round, 16, 10)
				slices.Sort(waits)
				ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
				b.ReportMetric(ms(waits[len(waits)/2]), "p50-ms")
				b.ReportMetric(ms(waits[len(waits)*95/100]), "p95-ms")
				b.ReportMetric(ms(waits[len(waits)-1]), "max-ms")
				b.ReportMetric(float64(failed), "failed/op")
			}
		})
	}
}

// contendedRemembers runs writers processes at once, each remembering each
// facts in turn, and returns every call's duration and how many failed.
func contendedRemembers(b *testing.B, bin, repo, home string, round, writers, each int) ([]time.Duration, int) {
	type result struct {
		took time.Duration
		err  error
	}
	results := make(chan result, writers*each)
	for w := range writers {
		go func() {
			for i := range each {
				cmd := exec.Command(bin, "remember", fmt.Sprintf("writer %d round %d stores fact %d about the cache", w, round, i))
				cmd.Dir = repo
				cmd.Env = append(os.Environ(), "ACOLYTE_HOME="+home, "GEMINI_API_KEY=", "GOOGLE_API_KEY=")
				start := time.Now()
				out, err := cmd.CombinedOutput()
				if err != nil {
					err = fmt.Errorf("%v: %s", err, out)
				}
				results <- result{time.Since(start), err}
			}
		}()
	}
	var waits []time.Duration
	failed := 0
	for range writers * each {
		r := <-results
		waits = append(waits, r.took)
		if r.err != nil {
			failed++
			b.Log(r.err)
		}
	}
	return waits, failed
}
