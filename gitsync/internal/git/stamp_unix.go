//go:build linux || darwin || freebsd || netbsd

package git

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// Stamp identifies a file's content by its metadata, as git's index does:
// size, modification and change times, inode and device. The change time
// cannot be set by tools that copy modification times (rsync -t, tar), so
// any rewrite shows.
func Stamp(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d:%d:%d", fi.Size(), fi.ModTime().UnixNano(), changeTime(st).UnixNano(), st.Ino, st.Dev)
}

// LastChange is the later of the file's modification and change times.
func LastChange(fi os.FileInfo) time.Time {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && changeTime(st).After(t) {
		t = changeTime(st)
	}
	return t
}

// FileIdentity is the device and inode of a file.
func FileIdentity(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}
