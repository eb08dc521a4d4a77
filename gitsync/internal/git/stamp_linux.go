package git

import (
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func changeTime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctim.Unix()) }

// StampsAt stamps each of names in the directory dir, as stamp does, by
// fstatat relative to the directory: a split project's check stats 257
// files, and resolving each absolute path again was half of that. A name
// that does not exist is left out; ok is false when dir cannot be read.
func StampsAt(dir string, names []string) (stamps map[string]string, ok bool) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	stamps = make(map[string]string, len(names))
	for _, name := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, 0); err == unix.ENOENT {
			continue
		} else if err != nil {
			return nil, false
		}
		b := strconv.AppendInt(make([]byte, 0, 80), int64(st.Size), 10)
		b = strconv.AppendInt(append(b, ':'), st.Mtim.Nano(), 10)
		b = strconv.AppendInt(append(b, ':'), st.Ctim.Nano(), 10)
		b = strconv.AppendUint(append(b, ':'), uint64(st.Ino), 10)
		b = strconv.AppendUint(append(b, ':'), uint64(st.Dev), 10)
		stamps[name] = string(b)
	}
	return stamps, true
}
