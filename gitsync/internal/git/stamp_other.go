//go:build !(linux || darwin || freebsd || netbsd)

package git

import (
	"os"
	"time"
)

// stamp is empty where the platform gives no change time or inode: there
// every refresh hashes the file.
func Stamp(os.FileInfo) string { return "" }

func LastChange(fi os.FileInfo) time.Time { return fi.ModTime() }

// fileIdentity is empty where the platform gives no inode.
func FileIdentity(os.FileInfo) string { return "" }
