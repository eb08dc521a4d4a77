//go:build !linux

package gitsync

// stampsAt is stat by stat elsewhere (stamp_linux.go): ok false sends the
// caller to os.Stat.
func stampsAt(string, []string) (map[string]string, bool) { return nil, false }
