package cmd

import (
	"bufio"
	"io"
	"os"
	"sync"
)

// chatInput is the chat's input: every line is read as soon as it is typed
// and queued, so that the prompt can wait for a line and for Ctrl-C at once,
// and so that what was typed while the model worked is kept, in order, as
// the next messages.
//
// On a terminal a confirmation takes only a line typed after it was shown
// (answer): a line typed ahead is a message, never a "yes" to a command
// the user had not seen yet. Piped input is a script, written knowing what
// it will be asked, so there the next line answers, as it always did.
type chatInput struct {
	mu     sync.Mutex
	lines  []queuedLine
	seq    int // sequence number of the next line read
	done   bool
	err    error
	notify chan struct{} // a line arrived or the input ended; capacity 1

	// tty, when set, is the terminal the lines come from; readMu is held
	// for each read from it and for the flush before a confirmation, so a
	// line is either read before the flush (and queued as a message) or
	// typed after it.
	tty    *os.File
	readMu sync.Mutex
}

type queuedLine struct {
	seq  int
	text string
}

// newChatInput starts reading r on a goroutine.
func newChatInput(r io.Reader) *chatInput {
	in := &chatInput{notify: make(chan struct{}, 1)}
	if f, ok := r.(*os.File); ok && isTerminal(f) {
		in.tty = f
		go in.readTerminal()
		return in
	}
	go in.readAll(r)
	return in
}

func (in *chatInput) readAll(r io.Reader) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		in.push(s.Text())
	}
	in.finish(s.Err())
}

func (in *chatInput) push(line string) {
	in.mu.Lock()
	in.lines = append(in.lines, queuedLine{in.seq, line})
	in.seq++
	in.mu.Unlock()
	in.wake()
}

func (in *chatInput) finish(err error) {
	in.mu.Lock()
	in.done, in.err = true, err
	in.mu.Unlock()
	in.wake()
}

func (in *chatInput) wake() {
	select {
	case in.notify <- struct{}{}:
	default:
	}
}

// take removes and returns the first queued line numbered at least from;
// ok is false when there is none yet, and ended true once the input ended
// with no such line.
func (in *chatInput) take(from int) (line string, ok, ended bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for i, l := range in.lines {
		if l.seq >= from {
			in.lines = append(in.lines[:i], in.lines[i+1:]...)
			return l.text, true, false
		}
	}
	return "", false, in.done
}

// Err is the read error that ended the input, if any.
func (in *chatInput) Err() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.err
}

// answerFrom is called once a confirmation is on screen: it discards what
// the terminal holds unread (a line being typed ahead) and returns the
// number from which lines are answers. Lines queued before it stay
// messages. For piped input every line not yet taken may answer.
func (in *chatInput) answerFrom() int {
	if in.tty == nil {
		return 0
	}
	in.readMu.Lock()
	defer in.readMu.Unlock()
	flushInput(in.tty)
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.seq
}
