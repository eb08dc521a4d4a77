package toolbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/agent/internal/agenttest"
	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/internal/benchdata"
	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/internal/stalememo"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/embed/static"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// The agent's memory_search marks a hit whose cited files changed or went
// since it was written, through the Stale its configuration is given (here
// gitsync's, as the CLI wires it), and leaves a fresh hit unmarked.
func TestMemorySearchMarksStaleHits(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) { t.Helper(); gittest.Run(t, root, args...) }
	write := func(name, content string) { t.Helper(); gittest.WriteFiles(t, root, map[string]string{name: content}) }
	git("init", "-q", "-b", "main")
	write("scripts/deploy.sh", "echo deploy\n")
	write("scripts/release.sh", "echo release\n")
	write("scripts/backup.sh", "echo backup\n")
	git("add", ".")
	git("commit", "-q", "-m", "scripts")

	repo, err := gitsync.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	_, store := agenttest.Open(t)
	ws := gitsync.NewCheckout(repo, store, "")
	stale := memory.StaleFunc(repo.StaleByID)
	tools := toolbox.MemoryConfig{Toolkit: ws, Source: toolbox.SourceAgent, Stale: stale}.AgentTools()

	facts := map[string]string{
		"deploy":  "Deploys run scripts/deploy.sh with the staging flag",
		"release": "Releases are cut by scripts/release.sh from main",
		"backup":  "Backups are taken by scripts/backup.sh every night",
	}
	ids := map[string]string{}
	for key, fact := range facts {
		res, err := call(t, tools, "memory_add", `{"content": "`+fact+`", "scope": "project"}`)
		if err != nil {
			t.Fatal(err)
		}
		ids[key] = res.(toolbox.MemoryAdded).ID
	}
	// find searches for a fact by its own words, with the given tools; a
	// stale hit comes with a note saying to verify it, and only then.
	find := func(tools []toolbox.Tool, key string) toolbox.MemoryHit {
		t.Helper()
		res, err := call(t, tools, "memory_search", `{"query": "`+facts[key]+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		hits := res.(toolbox.MemoryHits)
		i := slices.IndexFunc(hits.Memories, func(h toolbox.MemoryHit) bool { return h.ID == ids[key] })
		if i < 0 {
			t.Fatalf("searching for the %s memory did not find it: %+v", key, hits)
		}
		anyStale := slices.ContainsFunc(hits.Memories, func(h toolbox.MemoryHit) bool { return h.Stale != nil })
		if verify := strings.Contains(hits.Note, "verify"); verify != anyStale {
			t.Errorf("searching for %s: a stale hit: %v, but note %q", key, anyStale, hits.Note)
		}
		return hits.Memories[i]
	}
	for key := range facts {
		if h := find(tools, key); h.Stale != nil {
			t.Errorf("before any change, the %s memory is marked stale: %+v", key, h.Stale)
		}
	}

	write("scripts/deploy.sh", "echo deploy --fast\n")
	git("rm", "-q", "scripts/release.sh")
	git("commit", "-q", "-am", "change deploy, drop release")

	if h := find(tools, "deploy"); h.Stale == nil || !slices.Equal(h.Stale.Changed, []string{"scripts/deploy.sh"}) || len(h.Stale.Deleted) != 0 {
		t.Errorf("deploy memory after its script changed: stale %+v, want changed scripts/deploy.sh", h.Stale)
	}
	if h := find(tools, "release"); h.Stale == nil || !slices.Equal(h.Stale.Deleted, []string{"scripts/release.sh"}) || len(h.Stale.Changed) != 0 {
		t.Errorf("release memory after its script went: stale %+v, want deleted scripts/release.sh", h.Stale)
	}
	if h := find(tools, "backup"); h.Stale != nil {
		t.Errorf("backup memory, whose script is unchanged, is marked stale: %+v", h.Stale)
	}
	// Without a Stale, nothing is marked: the toolbox knows no git.
	if h := find(toolbox.MemoryTools(ws), "deploy"); h.Stale != nil {
		t.Errorf("with no Stale configured, the deploy memory is marked: %+v", h.Stale)
	}
}

// BenchmarkSearchStale measures what marking stale hits adds to
// memory_search over 10,000 memories in a real repository, with gitsync's
// Stale kept by stalememo as the CLI wires it: "off" is the search alone;
// "cited" has every memory citing a file at a commit (a tenth of the files
// changed since), so every hit shown needs an answer, which git gives the
// first time and the memo after; "cited-state" starts a memo each call
// over the store, as each CLI search does; "cited-unkept" asks gitsync
// every time, as the first search of each hit does; "cited-kept-blobs"
// too, with the committed blobs kept ahead of time in the store
// (gitsync.KeepCitedBlobs); "uncited" memories have neither commit nor
// paths, which need no answer. Each reports the median call
// as ms-median, and the median time in the check within it as
// check-ms-median.
//
//	go test ./agent/toolbox -run '^$' -bench BenchmarkSearchStale -count 5
func BenchmarkSearchStale(b *testing.B) {
	root := b.TempDir()
	git := func(args ...string) string { b.Helper(); return strings.TrimSpace(gittest.Run(b, root, args...)) }
	const files = 100
	file := func(i int) string { return fmt.Sprintf("services/svc%03d.go", i%files) }
	write := func(i int, content string) {
		b.Helper()
		if err := os.WriteFile(filepath.Join(root, file(i)), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	if err := os.MkdirAll(filepath.Join(root, "services"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range files {
		write(i, fmt.Sprintf("package services\n\nconst Name%d = %q\n", i, file(i)))
	}
	git("add", ".")
	git("commit", "-q", "-m", "services")
	head := git("rev-parse", "HEAD")
	for i := 0; i < files; i += 10 {
		write(i, fmt.Sprintf("package services\n\nconst Name%d = %q // renamed\n", i, file(i)))
	}
	git("commit", "-q", "-am", "change a tenth")
	// A checkout's files were written before the search, not within its
	// mtime's tick: the memo keeps answers about those alone.
	hourAgo := time.Now().Add(-time.Hour)
	for i := range files {
		if err := os.Chtimes(filepath.Join(root, file(i)), hourAgo, hourAgo); err != nil {
			b.Fatal(err)
		}
	}
	repo, err := gitsync.Discover(root)
	if err != nil {
		b.Fatal(err)
	}
	stale := memory.StaleFunc(repo.StaleByID)

	var stores []*sqlite.Store
	open := func(cited bool) memory.Toolkit {
		b.Helper()
		store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "acolyte.db"), static.New())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { store.Close() })
		stores = append(stores, store)
		vis := memory.Visibility{ProjectKey: root}
		mems := make([]memory.Memory, 0, 10_000)
		for i := range 10_000 {
			m, err := store.Prepare(vis, memory.Draft{Content: benchdata.Runbook(i) + " in " + file(i), Scope: memory.ScopeProject})
			if err != nil {
				b.Fatal(err)
			}
			if cited {
				m.Commit, m.Paths = head, []string{file(i)}
			}
			mems = append(mems, m)
		}
		if _, err := store.ReplaceScope(context.Background(), memory.ScopeProject, root, mems); err != nil {
			b.Fatal(err)
		}
		return memory.Scoped{Store: store, Visibility: vis}
	}
	queries := []string{"how is the billing service rolled back", "when does the auth service rotate its keys",
		"what does the scheduler do at midnight UTC", "which service pages the on-call engineer after a deploy",
		"how does the cache service warm its cache"}
	run := func(b *testing.B, tk memory.Toolkit, stale memory.StaleFunc, wantStale bool) {
		// The check alone is timed too: the search around it varies by
		// more than the check costs on a shared machine.
		var checked time.Duration
		timed := stale
		if stale != nil {
			timed = func(ctx context.Context, mems []memory.Memory) (map[string]memory.Staleness, error) {
				start := time.Now()
				defer func() { checked += time.Since(start) }()
				return stale(ctx, mems)
			}
		}
		tools := toolbox.MemoryConfig{Toolkit: tk, Stale: timed}.AgentTools()
		var search toolbox.Tool
		for _, t := range tools {
			if t.Name == "memory_search" {
				search = t
			}
		}
		args := make([]json.RawMessage, len(queries))
		for i, q := range queries {
			args[i], _ = json.Marshal(map[string]string{"query": q})
		}
		sawStale := false
		durations := make([]time.Duration, 0, b.N)
		checks := make([]time.Duration, 0, b.N)
		for i := 0; b.Loop(); i++ {
			checked = 0
			start := time.Now()
			res, err := search.Call(b.Context(), args[i%len(args)])
			durations = append(durations, time.Since(start))
			checks = append(checks, checked)
			if err != nil {
				b.Fatal(err)
			}
			hits := res.(toolbox.MemoryHits).Memories
			if len(hits) == 0 {
				b.Fatal("no results")
			}
			for _, h := range hits {
				sawStale = sawStale || h.Stale != nil
			}
		}
		if sawStale != wantStale {
			b.Fatalf("stale hits seen: %v, want %v", sawStale, wantStale)
		}
		slices.Sort(durations)
		slices.Sort(checks)
		b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "ms-median")
		b.ReportMetric(float64(checks[len(checks)/2].Microseconds())/1000, "check-ms-median")
	}
	cited, uncited := open(true), open(false)
	b.Run("off", func(b *testing.B) {
		run(b, cited, nil, false)
	})
	b.Run("cited", func(b *testing.B) {
		run(b, cited, stalememo.New(root, stale).Stale, true)
	})
	b.Run("cited-state", func(b *testing.B) {
		// A memo of its own each call, over the store: a CLI search.
		fresh := func(ctx context.Context, mems []memory.Memory) (map[string]memory.Staleness, error) {
			memo := stalememo.New(root, stale)
			memo.State = stores[0]
			return memo.Stale(ctx, mems)
		}
		run(b, cited, fresh, true)
	})
	b.Run("cited-unkept", func(b *testing.B) {
		run(b, cited, stale, true)
	})
	b.Run("cited-kept-blobs", func(b *testing.B) {
		// No answer kept, but the committed blobs are, as the background
		// fill or a server keeps them ahead of a search: a first look.
		kept := repo.StaleByIDKeeping(stores[0])
		mems, err := stores[0].List(b.Context(), memory.Visibility{ProjectKey: root}, memory.Filter{Scope: memory.ScopeProject})
		if err != nil {
			b.Fatal(err)
		}
		if err := repo.KeepCitedBlobs(b.Context(), stores[0], mems); err != nil {
			b.Fatal(err)
		}
		run(b, cited, kept, true)
	})
	b.Run("uncited", func(b *testing.B) {
		run(b, uncited, stalememo.New(root, stale).Stale, false)
	})
}
