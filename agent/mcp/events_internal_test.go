package mcp

import (
	"context"
	"errors"
	"fmt"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func replay(t *testing.T, l *eventLog, session, stream string, after int) ([]string, error) {
	t.Helper()
	var got []string
	for d, err := range l.After(context.Background(), session, stream, after) {
		if err != nil {
			return got, err
		}
		got = append(got, string(d))
	}
	return got, nil
}

// The log replays a recent stream from any index, keeps only a session's
// latest streams, refuses to replay one it dropped (even when it is used
// again), and holds its byte bound.
func TestEventLogKeepsTheLatestStreams(t *testing.T) {
	ctx := context.Background()
	l := newEventLog(3, 1<<20)
	l.Open(ctx, "A", "") // the standalone stream
	l.Append(ctx, "A", "", []byte("note"))
	for i := range 5 {
		id := fmt.Sprint("s", i)
		l.Open(ctx, "A", id)
		l.Append(ctx, "A", id, []byte(id+"-0"))
		l.Append(ctx, "A", id, []byte(id+"-1"))
	}
	if got, err := replay(t, l, "A", "s4", 0); err != nil || len(got) != 1 || got[0] != "s4-1" {
		t.Errorf("replay of the latest stream after event 0: %q, %v", got, err)
	}
	if got, err := replay(t, l, "A", "s2", -1); err != nil || len(got) != 2 {
		t.Errorf("replay of the third latest stream from its start: %q, %v", got, err)
	}
	if _, err := replay(t, l, "A", "s1", -1); !errors.Is(err, sdk.ErrEventsPurged) {
		t.Errorf("replay of a stream past the latest 3: %v, want ErrEventsPurged", err)
	}
	// A dropped stream written to again cannot say which events it lost.
	l.Append(ctx, "A", "s0", []byte("late"))
	if _, err := replay(t, l, "A", "s0", 1); !errors.Is(err, sdk.ErrEventsPurged) {
		t.Errorf("replay of a dropped stream written to again: %v, want ErrEventsPurged", err)
	}
	if n := len(l.sessions["A"].streams); n != 4 {
		t.Errorf("session A keeps %d streams, want the latest 3 and the standalone one", n)
	}
	// The standalone stream outlives any number of request streams.
	if got, err := replay(t, l, "A", "", -1); err != nil || len(got) != 1 || got[0] != "note" {
		t.Errorf("replay of the standalone stream: %q, %v", got, err)
	}

	l.SessionClosed(ctx, "A")
	if l.bytes != 0 || len(l.sessions) != 0 {
		t.Errorf("after the session closed: %d bytes in %d sessions", l.bytes, len(l.sessions))
	}

	// Past the byte bound the oldest events go, each stream's last stays.
	small := newEventLog(8, 10)
	small.Open(ctx, "B", "x")
	for i := range 6 {
		small.Append(ctx, "B", "x", []byte(fmt.Sprint("e", i)))
	}
	if small.bytes > 10 {
		t.Errorf("%d bytes kept, bound 10", small.bytes)
	}
	if _, err := replay(t, small, "B", "x", -1); !errors.Is(err, sdk.ErrEventsPurged) {
		t.Errorf("replay from a purged event: %v, want ErrEventsPurged", err)
	}
	if got, err := replay(t, small, "B", "x", 4); err != nil || len(got) != 1 || got[0] != "e5" {
		t.Errorf("replay of the last event: %q, %v", got, err)
	}
}
