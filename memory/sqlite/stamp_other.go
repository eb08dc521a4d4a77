//go:build !linux

package sqlite

import (
	"fmt"
	"os"
)

// fileStamp identifies a file's content by its size and modification time;
// Linux adds the change time, inode and device (stamp_linux.go).
func fileStamp(fi os.FileInfo) string {
	return fmt.Sprintf("%d:%d", fi.Size(), fi.ModTime().UnixNano())
}
