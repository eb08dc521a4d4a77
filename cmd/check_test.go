package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync"
	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/memory"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), append([]string{"acolyte"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
}

func TestCheckCommandExitCodes(t *testing.T) {
	root := t.TempDir()
	gitInit(t, root)
	os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("- Run go test before pushing.\n"), 0o644)

	code, out, errOut := runCLI(t, "--repo", root, "check")
	if code != ExitFail || !strings.Contains(out, `+ r-`) || !strings.Contains(errOut, "acolyte sync") {
		t.Fatalf("stale: code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	derived, _ := derive.Memories(root)
	if err := format.WriteFile(format.MemoriesPath(root), derived); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "--repo", root, "check", "--quiet"); code != ExitOK || out != "" {
		t.Fatalf("fresh --quiet: code %d, stdout %q", code, out)
	}
	code, out, _ = runCLI(t, "--repo", root, "check", "--json")
	var report gitsync.Report
	if code != ExitOK || json.Unmarshal([]byte(out), &report) != nil || !report.OK {
		t.Fatalf("fresh --json: code %d, %s", code, out)
	}

	if code, _, _ := runCLI(t, "--repo", t.TempDir(), "check"); code != ExitUsage {
		t.Fatalf("outside a repository: code %d, want %d", code, ExitUsage)
	}
}

func TestMergeDriverCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mems ...memory.Memory) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, format.Encode(mems), 0o644)
		return p
	}
	fact := func(id, content string) memory.Memory {
		return memory.Memory{ID: id, Scope: memory.ScopeProject, Kind: memory.KindStored, Content: content}
	}
	base := write("base", fact("01A", "shared fact"))
	ours := write("ours", fact("01A", "shared fact"), fact("01B", "ours"))
	theirs := write("theirs", fact("01A", "shared fact"), fact("01C", "theirs"))
	if code, _, errOut := runCLI(t, "merge-driver", base, ours, theirs); code != ExitOK {
		t.Fatalf("code %d: %s", code, errOut)
	}
	merged, _ := format.ReadFile(ours)
	if len(merged) != 3 {
		t.Fatalf("merged %d memories, want 3", len(merged))
	}
	os.WriteFile(theirs, []byte("<<<<<<< HEAD\n"), 0o644)
	if code, _, errOut := runCLI(t, "merge-driver", base, ours, theirs); code != ExitFail || !strings.Contains(errOut, "conflict") {
		t.Fatalf("conflicted input: code %d: %s", code, errOut)
	}
	if code, _, _ := runCLI(t, "merge-driver", base); code != ExitUsage {
		t.Fatalf("missing arguments: code %d", code)
	}
}

func TestSeedCommandAddsOnce(t *testing.T) {
	root := t.TempDir()
	gitInit(t, root)
	seeds := filepath.Join(t.TempDir(), "team.json")
	os.WriteFile(seeds, []byte(`["Deploys happen on Tuesdays.", {"content": "Staging is eu-west-1.", "topic": "infra"}]`), 0o644)
	for i, want := range []string{"added 2 of 2", "added 0 of 2"} {
		code, out, errOut := runCLI(t, "--repo", root, "seed", seeds)
		if code != ExitOK || !strings.Contains(out, want) {
			t.Fatalf("run %d: code %d, %q %q", i, code, out, errOut)
		}
	}
	mems, err := format.ReadFile(format.MemoriesPath(root))
	if err != nil || len(mems) != 2 || mems[0].Source != "imported:team.json" {
		t.Fatalf("memories %+v, %v", mems, err)
	}
	// Imported seeds are not derived, so a check of the repository stays fresh.
	if code, out, errOut := runCLI(t, "--repo", root, "check"); code != ExitOK {
		t.Fatalf("check after seed: %d %s %s", code, out, errOut)
	}
	os.WriteFile(seeds, []byte(`["ok fact", 3]`), 0o644)
	if code, _, errOut := runCLI(t, "--repo", root, "seed", seeds); code != ExitFail || !strings.Contains(errOut, "team.json:1:13: seed 2") {
		t.Fatalf("bad seeds: code %d %s", code, errOut)
	}
}
