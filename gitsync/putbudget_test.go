package gitsync

import (
	"testing"
	"time"
)

// keepingStore keeps the blobs of keepInlinePuts single writes a second
// on their own path, and of the next ones again a second later.
func TestPutBudget(t *testing.T) {
	var b putBudget
	start := time.Unix(1_700_000_000, 0)
	for i := range keepInlinePuts + 3 {
		if got := b.take(start.Add(time.Duration(i) * time.Millisecond)); got != (i < keepInlinePuts) {
			t.Errorf("write %d in the first second: take = %v", i+1, got)
		}
	}
	if !b.take(start.Add(time.Second)) {
		t.Error("a write a second later found no budget")
	}
}
