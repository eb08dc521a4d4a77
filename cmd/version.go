package cmd

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Set at link time by a release build (.goreleaser.yaml):
//
//	-ldflags "-X github.com/acolyte-dev/acolyte/cmd.buildVersion=v1.2.3
//	          -X github.com/acolyte-dev/acolyte/cmd.buildCommit=abc123
//	          -X github.com/acolyte-dev/acolyte/cmd.buildDate=2026-01-02T03:04:05Z"
//
// They are never written at run time.
var (
	buildVersion string
	buildCommit  string
	buildDate    string
)

// version is what --version prints: the version, commit and date a release
// build was stamped with, else what the Go toolchain recorded (the module
// version of go install, the git revision and time of a build in a
// checkout), so a plain go build is not just "dev".
func version() string {
	ver, commit, date, modified := buildVersion, buildCommit, buildDate, false
	if info, ok := debug.ReadBuildInfo(); ok {
		if ver == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			ver = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					commit = s.Value
				}
			case "vcs.time":
				if date == "" {
					date = s.Value
				}
			case "vcs.modified":
				modified = buildCommit == "" && s.Value == "true"
			}
		}
	}
	return formatVersion(ver, commit, date, modified)
}

func formatVersion(ver, commit, date string, modified bool) string {
	if ver == "" {
		ver = "dev"
	}
	var parts []string
	if commit != "" {
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if modified {
			commit += "+modified"
		}
		parts = append(parts, "commit "+commit)
	}
	if date != "" {
		parts = append(parts, date)
	}
	if len(parts) == 0 {
		return ver
	}
	return fmt.Sprintf("%s (%s)", ver, strings.Join(parts, ", "))
}
