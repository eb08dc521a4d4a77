package flock

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSecondOpenWaitsForTheFirst checks the lock belongs to the open
// file: a second open of the same path cannot take it until the first is
// closed.
func TestSecondOpenWaitsForTheFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("first TryLock = %v, %v", ok, err)
	}
	b, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if ok, err := TryLock(b); ok || err != nil {
		t.Fatalf("second TryLock while the first holds it = %v, %v; want false, nil", ok, err)
	}
	a.Close()
	if ok, err := TryLock(b); !ok || err != nil {
		t.Fatalf("TryLock after the holder closed = %v, %v", ok, err)
	}
}
