package mcp

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the events kept for resuming a broken stream (issue 37). The
// SDK's MemoryEventStore keeps every stream a session ever had, each
// request's answer included, until the session ends: an agent that keeps
// its session and calls memory_add and memory_search in turn grew the
// server by about 22 KB of RSS an add, without end. A client resumes a
// stream it lost a moment ago, for a request still in flight or just
// answered, so only a session's latest streams are worth keeping.
const (
	// keptStreams is how many of a session's request streams keep their
	// events, the most recently used, besides its standalone stream; an
	// older one's resumption is refused, as a purged one's is.
	keptStreams = 16
	// maxEventBytes bounds the events kept for every session together;
	// past it the oldest events of each stream go first.
	maxEventBytes = 4 << 20
)

// eventLog is the sdk.EventStore of the HTTP server: per session, the
// events of its keptStreams most recently used streams, at most maxBytes in
// all.
type eventLog struct {
	mu       sync.Mutex
	keep     int
	maxBytes int
	bytes    int
	sessions map[string]*sessionEvents
}

type sessionEvents struct {
	streams map[string]*streamEvents
	// recent holds the ids of streams, least recently used first.
	recent []string
}

type streamEvents struct {
	first int // the stream's index of data[0]
	data  [][]byte
	size  int
	// lost says the stream was dropped (keptStreams) and used again
	// since: its earlier events are gone, and with them the indices of
	// the later ones.
	lost bool
}

func newEventLog(keep, maxBytes int) *eventLog {
	return &eventLog{keep: keep, maxBytes: maxBytes, sessions: map[string]*sessionEvents{}}
}

var _ sdk.EventStore = (*eventLog)(nil)

// use returns the stream, making it the session's most recent, creating it
// (lost when create is false: it was dropped) and dropping the least
// recent past l.keep.
func (l *eventLog) use(sessionID, streamID string, create bool) *streamEvents {
	se := l.sessions[sessionID]
	if se == nil {
		se = &sessionEvents{streams: map[string]*streamEvents{}}
		l.sessions[sessionID] = se
	}
	st := se.streams[streamID]
	if st == nil {
		st = &streamEvents{lost: !create}
		se.streams[streamID] = st
	}
	if streamID == "" {
		// The session's standalone stream (server-to-client
		// notifications) lives as long as the session; maxBytes bounds
		// its events.
		return st
	}
	if i := slices.Index(se.recent, streamID); i >= 0 {
		se.recent = append(se.recent[:i], se.recent[i+1:]...)
	}
	se.recent = append(se.recent, streamID)
	for len(se.recent) > l.keep {
		old := se.recent[0]
		se.recent = slices.Delete(se.recent, 0, 1)
		l.bytes -= se.streams[old].size
		delete(se.streams, old)
	}
	return st
}

// Open implements sdk.EventStore.
func (l *eventLog) Open(_ context.Context, sessionID, streamID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.use(sessionID, streamID, true)
	return nil
}

// Append implements sdk.EventStore.
func (l *eventLog) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.use(sessionID, streamID, false)
	if st.lost {
		return nil // it cannot be replayed: After refuses it
	}
	st.data = append(st.data, data)
	st.size += len(data)
	l.bytes += len(data)
	l.purge()
	return nil
}

// purge drops the oldest event of every stream until the log fits
// maxBytes, keeping each stream's latest event.
func (l *eventLog) purge() {
	for l.bytes > l.maxBytes {
		dropped := false
		for _, se := range l.sessions {
			for _, st := range se.streams {
				if len(st.data) > 1 {
					l.bytes -= len(st.data[0])
					st.size -= len(st.data[0])
					st.data[0] = nil
					st.data = st.data[1:]
					st.first++
					dropped = true
				}
			}
		}
		if !dropped {
			return
		}
	}
}

// After implements sdk.EventStore.
func (l *eventLog) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	l.mu.Lock()
	var (
		ds  [][]byte
		err error
		st  *streamEvents
	)
	se := l.sessions[sessionID]
	if se != nil {
		st = se.streams[streamID]
	}
	switch {
	case se == nil:
		err = fmt.Errorf("no events kept for session %q", sessionID)
	case st == nil || st.lost:
		err = fmt.Errorf("stream %q of session %q: %w (only the latest %d streams are kept)", streamID, sessionID, sdk.ErrEventsPurged, l.keep)
	case index+1 < st.first:
		err = fmt.Errorf("stream %q of session %q, after event %d: %w", streamID, sessionID, index, sdk.ErrEventsPurged)
	case index+1-st.first < len(st.data):
		ds = slices.Clone(st.data[index+1-st.first:])
	}
	l.mu.Unlock()
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range ds {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// SessionClosed implements sdk.EventStore.
func (l *eventLog) SessionClosed(_ context.Context, sessionID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if se := l.sessions[sessionID]; se != nil {
		for _, st := range se.streams {
			l.bytes -= st.size
		}
		delete(l.sessions, sessionID)
	}
	return nil
}
