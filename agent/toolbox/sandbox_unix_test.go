//go:build unix

package toolbox

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSpecialFilesDoNotBlock: opening a FIFO with no writer blocks until
// one comes; the tools must refuse it at once instead.
func TestSpecialFilesDoNotBlock(t *testing.T) {
	w, _ := newTestWorkspace(t)
	fifo := filepath.Join(w.Root, "pkg", "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(w.Root, "zero")); err != nil {
		t.Fatal(err)
	}
	tools := w.Tools()
	for _, c := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"read_file", map[string]any{"path": "pkg/pipe"}, CodeInvalidArgs},
		{"edit_file", map[string]any{"path": "pkg/pipe", "old": "a", "new": "b"}, CodeInvalidArgs},
		{"write_file", map[string]any{"path": "pkg/pipe", "content": "x"}, CodeInvalidArgs},
		{"read_file", map[string]any{"path": "zero"}, CodeOutsideWorkspace},
		{"search_code", map[string]any{"pattern": "x"}, ""},
		{"list_files", map[string]any{}, ""},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := callTool(t, tools, c.tool, c.args)
			done <- err
		}()
		select {
		case err := <-done:
			if c.code == "" {
				if err != nil {
					t.Errorf("%s: %v", c.tool, err)
				}
				continue
			}
			wantCode(t, err, c.code)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s %v blocked", c.tool, c.args)
		}
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v", err)
	}
}
