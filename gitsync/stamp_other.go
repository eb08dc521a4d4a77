//go:build !(linux || darwin || freebsd || netbsd)

package gitsync

import (
	"os"
	"time"
)

// stamp is empty where the platform gives no change time or inode: there
// every refresh hashes the file.
func stamp(os.FileInfo) string { return "" }

func lastChange(fi os.FileInfo) time.Time { return fi.ModTime() }

// fileIdentity is empty where the platform gives no inode.
func fileIdentity(os.FileInfo) string { return "" }
