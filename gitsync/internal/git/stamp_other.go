//go:build !(linux || darwin || freebsd || netbsd)

package git

import (
	"os"
	"time"
)

// Stamp is empty where the platform gives no change time or inode: there
// every refresh hashes the file.
func Stamp(os.FileInfo) string { return "" }

func LastChange(fi os.FileInfo) time.Time { return fi.ModTime() }

// FileIdentity is empty where the platform gives no inode.
func FileIdentity(os.FileInfo) string { return "" }
