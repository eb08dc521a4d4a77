package gitsync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

func TestLockDirIsExclusiveAndTimesOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), format.Dir)
	unlock, err := LockDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := LockDir(ctx, dir); err == nil {
		t.Fatal("second lock succeeded while the first was held")
	} else if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), ".lock") {
		t.Fatalf("want ErrLocked naming the lock file, got %v", err)
	}
	unlock()
	unlock2, err := LockDir(context.Background(), dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

func TestUpdateSerialisesWriters(t *testing.T) {
	root := t.TempDir()
	const writers = 8
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			errs <- Update(context.Background(), root, func(mems []memory.Memory) ([]memory.Memory, error) {
				return append(mems, stored(memory.NewID(t0.Add(time.Duration(i)*time.Second)), "fact from writer", t0)), nil
			})
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	mems, err := format.ReadFile(format.MemoriesPath(root))
	if err != nil || len(mems) != writers {
		t.Fatalf("got %d memories (%v), want %d: a writer's update was lost", len(mems), err, writers)
	}
	failing := errors.New("refused")
	if err := Update(context.Background(), root, func([]memory.Memory) ([]memory.Memory, error) { return nil, failing }); !errors.Is(err, failing) {
		t.Fatalf("Update error = %v", err)
	}
	if after, _ := format.ReadFile(format.MemoriesPath(root)); len(after) != writers {
		t.Fatal("a failed change modified the file")
	}
}

func TestEnsureAttributesKeepsExistingLines(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, format.Dir)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("scratch/"), 0o644)
	for range 2 {
		if err := EnsureAttributes(root); err != nil {
			t.Fatal(err)
		}
	}
	attrs, _ := os.ReadFile(filepath.Join(dir, ".gitattributes"))
	if string(attrs) != "memories.jsonl merge=union\nforgotten.jsonl merge=union\n" {
		t.Errorf(".gitattributes = %q", attrs)
	}
	ignore, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if string(ignore) != "scratch/\n/.lock\n/.tmp-*\n" {
		t.Errorf(".gitignore = %q", ignore)
	}
}

// A writer that gave up waiting must not end up holding the lock: the
// kernel call it was blocked in may take the lock after it returned, and
// that lock has to be dropped, or every later writer would time out.
func TestLockDirWaiterThatGaveUpLeavesTheLockFree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), format.Dir)
	unlock, err := LockDir(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		if _, err := LockDir(ctx, dir); !errors.Is(err, ErrLocked) {
			t.Fatalf("waiting on a held lock: want ErrLocked, got %v", err)
		}
		cancel()
	}
	// A waiter still blocked when the holder leaves gets the lock.
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		u, err := LockDir(ctx, dir)
		if err == nil {
			defer u()
			short, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			if _, err := LockDir(short, dir); err == nil {
				got <- errors.New("the lock was not exclusive after the hand-over")
				return
			}
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("after the holder left (and three waiters gave up): %v", err)
	}
}
