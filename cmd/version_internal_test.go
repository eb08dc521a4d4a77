package cmd

import "testing"

func TestFormatVersion(t *testing.T) {
	for _, tc := range []struct {
		ver, commit, date string
		modified          bool
		want              string
	}{
		{"", "", "", false, "dev"},
		{"v0.1.0", "0123456789abcdef0123", "2026-12-01T10:00:00Z", false, "v0.1.0 (commit 0123456789ab, 2026-12-01T10:00:00Z)"},
		{"", "0123456789abcdef0123", "2026-12-01T10:00:00Z", true, "dev (commit 0123456789ab+modified, 2026-12-01T10:00:00Z)"},
		{"v1.2.3", "", "", false, "v1.2.3"},
	} {
		if got := formatVersion(tc.ver, tc.commit, tc.date, tc.modified); got != tc.want {
			t.Errorf("formatVersion(%q, %q, %q, %v) = %q, want %q", tc.ver, tc.commit, tc.date, tc.modified, got, tc.want)
		}
	}
}
