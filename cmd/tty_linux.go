package cmd

import (
	"bytes"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal, whose typed-ahead input a
// confirmation must not take.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// flushInput discards what was typed on the terminal and not yet read
// (tcflush(TCIFLUSH)): a half-typed line is not an answer.
func flushInput(f *os.File) {
	_ = unix.IoctlSetInt(int(f.Fd()), unix.TCFLSH, unix.TCIFLUSH)
}

// readTerminal queues the terminal's lines. It waits for input with poll
// outside readMu, then reads under readMu only what poll says is there, so
// that a read never blocks while holding it and answerFrom's flush cannot
// fall between a line being read and being queued. In canonical mode poll
// reports input once a whole line (or Ctrl-D) was typed.
func (in *chatInput) readTerminal() {
	fd := int(in.tty.Fd())
	buf := make([]byte, 64<<10)
	var partial []byte
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, 200); err != nil && !errors.Is(err, unix.EINTR) {
			in.finish(err)
			return
		}
		in.readMu.Lock()
		ready := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(ready, 0)
		if err != nil || n == 0 || ready[0].Revents == 0 {
			in.readMu.Unlock()
			continue
		}
		got, err := unix.Read(fd, buf)
		if got > 0 {
			partial = append(partial, buf[:got]...)
			for {
				i := bytes.IndexByte(partial, '\n')
				if i < 0 {
					break
				}
				in.push(string(bytes.TrimSuffix(partial[:i], []byte("\r"))))
				partial = partial[i+1:]
			}
		}
		in.readMu.Unlock()
		switch {
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
		case err != nil:
			in.finish(err)
			return
		case got == 0: // Ctrl-D on an empty line, or the terminal went away
			if len(partial) > 0 {
				in.push(string(partial))
			}
			in.finish(nil)
			return
		}
	}
}
