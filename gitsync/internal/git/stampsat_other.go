//go:build !linux

package git

// StampsAt is stat by stat elsewhere (stamp_linux.go): ok false sends the
// caller to os.Stat.
func StampsAt(string, []string) (map[string]string, bool) { return nil, false }
