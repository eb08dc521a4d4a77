package sqlite

import (
	"fmt"
	"os"
	"syscall"
)

// fileStamp identifies a file's content by its metadata: size,
// modification and change times, inode and device. The change time cannot
// be set back by a program that restores the modification time, so any
// write into the file shows.
func fileStamp(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d:%d:%d", fi.Size(), fi.ModTime().UnixNano(), st.Ctim.Nano(), st.Ino, st.Dev)
}
