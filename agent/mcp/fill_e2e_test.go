package mcp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/internal/flock"
	"github.com/acolyte-dev/acolyte/memory"
)

// manyMemories are more than a write embeds with the model at once.
func manyMemories(n int) []memory.Memory {
	ms := make([]memory.Memory, n)
	for i := range ms {
		ms[i] = memory.Memory{
			ID:      fmt.Sprintf("01JB2Q3N5V8XK4M7R9T1W6Y%03d", i),
			Scope:   memory.ScopeProject,
			Kind:    memory.KindStored,
			Content: fmt.Sprintf("Service %d deploys from the release branch after the canary passes", i),
		}
	}
	return ms
}

type vectorStatus struct {
	Pending       int    `json:"pending"`
	SearchVectors string `json:"search_vectors"`
	Instant       string `json:"instant"`
}

// status runs `acolyte status --json` in the repository; background says
// whether it may start the background fill itself.
func (f *fixture) status(t *testing.T, background bool) vectorStatus {
	t.Helper()
	cmd := exec.Command(acolyteBin, "status", "--json")
	cmd.Dir, cmd.Env = f.repo, f.env()
	if !background {
		cmd.Env = append(cmd.Env, "ACOLYTE_BACKGROUND_FILL=0")
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("acolyte status: %v", err)
	}
	var st vectorStatus
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st
}

// waitFilled polls status until no memory waits for the model's vectors,
// then until the filler has let go of its lock, so that no process is
// left writing in the test's directories.
func (f *fixture) waitFilled(t *testing.T) vectorStatus {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st := f.status(t, false)
		if st.Pending == 0 {
			lock, err := os.OpenFile(filepath.Join(f.home, "acolyte", "acolyte.db-fill.lock"), os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Close()
			for {
				if ok, _ := flock.TryLock(lock); ok {
					return st
				}
				if time.Now().After(deadline) {
					t.Fatal("the background fill still holds its lock with nothing left to fill")
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d memories still wait for their model vectors after two minutes", st.Pending)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A fresh clone's first command imports its memories with the instant
// vectors and returns; a background process it starts makes the model's,
// and search moves to them.
func TestFirstCommandLeavesTheModelVectorsToTheBackground(t *testing.T) {
	f := newFixture(t, manyMemories(40)...)
	f.embedder = "minilm"
	st := f.status(t, true)
	if st.Instant == "" || st.SearchVectors != st.Instant || st.Pending == 0 {
		t.Fatalf("first status = %+v; want search by the instant vectors while the model's are made", st)
	}
	st = f.waitFilled(t)
	if st.SearchVectors == st.Instant {
		t.Fatalf("after the fill, status = %+v; want search by the model's vectors", st)
	}
	cmd := exec.Command(acolyteBin, "search", "--json", "which branch do services deploy from")
	cmd.Dir, cmd.Env = f.repo, f.env()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("acolyte search: %v", err)
	}
	var results []memory.Result
	if err := json.Unmarshal(out, &results); err != nil || len(results) == 0 {
		t.Fatalf("search --json = %s (%v); want results", out, err)
	}
	if results[0].Vectors != st.SearchVectors {
		t.Fatalf("search ranked by %q; status says %q", results[0].Vectors, st.SearchVectors)
	}
}

// The MCP server makes the model vectors itself while it serves, with no
// command to start the fill.
func TestMCPServerFillsTheModelVectors(t *testing.T) {
	f := newFixture(t, manyMemories(40)...)
	f.embedder = "minilm"
	cs := f.connect(t)
	if hits := search(t, cs, "which branch do services deploy from"); len(hits.Memories) == 0 {
		t.Fatal("memory_search found nothing")
	}
	if st := f.waitFilled(t); st.SearchVectors == st.Instant {
		t.Fatalf("with the server running, status = %+v; want search by the model's vectors", st)
	}
}

// citingFixture is a repository whose n committed memories each cite
// src/deploy.go at the commit that added it.
func citingFixture(t *testing.T, n int) (*fixture, *gitsync.Repo, []memory.Memory) {
	t.Helper()
	f := newFixture(t)
	if err := os.MkdirAll(filepath.Join(f.repo, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.repo, "src", "deploy.go"), []byte("package src\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.git(t, "add", ".")
	f.git(t, "commit", "-q", "-m", "deploy")
	head, err := gitsync.Discover(f.repo)
	if err != nil {
		t.Fatal(err)
	}
	mems := manyMemories(n)
	for i := range mems {
		mems[i].Commit, mems[i].Paths = head.Head(), []string{"src/deploy.go"}
	}
	f.writeMemories(t, mems...)
	f.git(t, "add", ".")
	f.git(t, "commit", "-q", "-m", "memories citing deploy.go")
	return f, head, mems
}

// toldStaleFromWhatWasKept changes the file mems cite and checks that
// every one is told stale from what the store kept, with the
// repository's objects out of reach.
func toldStaleFromWhatWasKept(t *testing.T, f *fixture, head *gitsync.Repo, mems []memory.Memory) {
	t.Helper()
	store := openStore(t, filepath.Join(f.home, "acolyte", "acolyte.db"))
	defer store.Close()
	objects := filepath.Join(head.CommonDir(), "objects")
	if err := os.Rename(objects, objects+".away"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Rename(objects+".away", objects) })
	if err := os.WriteFile(filepath.Join(f.repo, "src", "deploy.go"), []byte("package src // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale, err := head.StaleByIDKeeping(store)(t.Context(), mems)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) != len(mems) {
		t.Fatalf("%d of %d memories told stale from the kept blobs, want all: %v", len(stale), len(mems), stale)
	}
}

// The background fill also finds, ahead of the first search that checks
// them, which blob each memory's cited file was at its commit.
func TestBackgroundFillKeepsTheCitedBlobs(t *testing.T) {
	f, head, mems := citingFixture(t, 40)
	f.embedder = "minilm"
	f.status(t, true)
	f.waitFilled(t)
	toldStaleFromWhatWasKept(t, f, head, mems)
}

// An import of more memories than a write finds the cited blobs of
// itself leaves them to the background fill, which the command starts
// even when the embedder leaves no vectors to make.
func TestABigImportLeavesTheCitedBlobsToTheBackground(t *testing.T) {
	f, head, mems := citingFixture(t, 100)
	f.embedder = "static"
	f.status(t, true)
	key := "blob:" + mems[0].Commit + ":src/deploy.go"
	store := openStore(t, filepath.Join(f.home, "acolyte", "acolyte.db"))
	deadline := time.Now().Add(time.Minute)
	for {
		if v, err := store.GetState(t.Context(), key); err == nil && v != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no background fill kept the cited blob within a minute of the import")
		}
		time.Sleep(100 * time.Millisecond)
	}
	store.Close()
	f.waitFilled(t)
	toldStaleFromWhatWasKept(t, f, head, mems)
}

// A search that meets a memory whose cited blob no write kept (one
// stored before writes kept them) starts the background fill, which
// keeps every memory's, one the search did not show included.
func TestASearchMeetingAnUnkeptBlobStartsTheFill(t *testing.T) {
	f, head, mems := citingFixture(t, 10)
	if err := os.WriteFile(filepath.Join(f.repo, "src", "tides.go"), []byte("package src\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.git(t, "add", ".")
	f.git(t, "commit", "-q", "-m", "tides")
	unseen := memory.Memory{ID: "01JB2Q3N5V8XK4M7R9T1W6Z999", Scope: memory.ScopeProject, Kind: memory.KindStored,
		Content: "The lighthouse keeper logs the tides every hour", Commit: head.Head(), Paths: []string{"src/tides.go"}}
	f.writeMemories(t, append(slices.Clone(mems), unseen)...)
	f.git(t, "add", ".")
	f.git(t, "commit", "-q", "-m", "a memory citing tides.go")
	f.status(t, false)

	// A store from before writes kept the ids has none.
	keys := []string{"blob:" + mems[0].Commit + ":src/deploy.go", "blob:" + unseen.Commit + ":src/tides.go"}
	store := openStore(t, filepath.Join(f.home, "acolyte", "acolyte.db"))
	if err := store.SetStates(t.Context(), map[string]string{keys[0]: "", keys[1]: ""}); err != nil {
		t.Fatal(err)
	}
	store.Close()

	cmd := exec.Command(acolyteBin, "search", "which branch do services deploy from")
	cmd.Dir, cmd.Env = f.repo, f.env()
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "release branch") {
		t.Fatalf("acolyte search: %v\n%s", err, out)
	}
	store = openStore(t, filepath.Join(f.home, "acolyte", "acolyte.db"))
	defer store.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		if v, err := store.GetState(t.Context(), keys[1]); err == nil && v != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("within a minute of the search, no background fill kept the blob of a memory it did not show")
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.waitFilled(t)
}
