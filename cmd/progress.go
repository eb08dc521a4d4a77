package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress draws a one-line bar on a terminal and stays silent otherwise,
// so piped output and CI logs are not filled with carriage returns.
type progress struct {
	w     io.Writer
	label string
	on    bool
	last  time.Time
	drawn bool
}

func newProgress(w io.Writer, label string) *progress {
	f, ok := w.(*os.File)
	on := false
	if ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progress{w: w, label: label, on: on}
}

func (p *progress) Update(done, total int) {
	if !p.on || total == 0 || (time.Since(p.last) < 100*time.Millisecond && done < total) {
		return
	}
	p.last = time.Now()
	const width = 30
	filled := width * done / total
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d", p.label, strings.Repeat("=", filled), strings.Repeat(" ", width-filled), done, total)
	p.drawn = true
}

func (p *progress) Done() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}
