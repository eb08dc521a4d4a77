package odb_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/internal/odb"
	"github.com/acolyte-dev/acolyte/internal/gittest"
)

// history makes a repository whose paths change, move, go and come back
// over many commits, so that a repack deltifies its trees, and returns
// its commits, oldest first, and every path any of them names.
func history(t *testing.T, root string) (commits, paths []string) {
	t.Helper()
	git := func(args ...string) string { t.Helper(); return strings.TrimSpace(gittest.Run(t, root, args...)) }
	git("init", "-q", "-b", "main")
	files := map[string]string{"a.txt": "a\n", "dir/b.txt": "b\n", "dir/sub/c.txt": "c\n", "run.sh": "#!/bin/sh\n"}
	for i := range 40 {
		files[fmt.Sprintf("dir/many/f%02d.txt", i)] = strings.Repeat(fmt.Sprintf("line %d\n", i), 50)
	}
	gittest.WriteFiles(t, root, files)
	if err := os.Chmod(filepath.Join(root, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Symlink(t, "a.txt", filepath.Join(root, "link"))
	git("add", ".")
	git("commit", "-q", "-m", "start")
	commits = append(commits, git("rev-parse", "HEAD"))
	// A submodule's commit in the tree (a gitlink), whose object is not here.
	git("update-index", "--add", "--cacheinfo", "160000,"+commits[0]+",mod")
	git("commit", "-q", "-m", "gitlink")
	commits = append(commits, git("rev-parse", "HEAD"))
	for i := range 30 {
		gittest.WriteFiles(t, root, map[string]string{
			"dir/sub/c.txt":                      fmt.Sprintf("c %d\n", i),
			fmt.Sprintf("dir/many/f%02d.txt", i): fmt.Sprintf("changed %d\n", i),
		})
		git("commit", "-q", "-am", fmt.Sprintf("change %d", i))
		commits = append(commits, git("rev-parse", "HEAD"))
	}
	git("mv", "dir/b.txt", "dir/b2.txt")
	git("rm", "-q", "a.txt")
	git("commit", "-q", "-m", "rename b, drop a")
	commits = append(commits, git("rev-parse", "HEAD"))
	paths = []string{"a.txt", "dir/b.txt", "dir/b2.txt", "dir/sub/c.txt", "run.sh", "link", "mod", "mod/x",
		"dir", "dir/sub", "nope", "dir/nope", "a.txt/x", "dir/many/f05.txt", "dir/many/f39.txt"}
	return commits, paths
}

// blobsByGit is what the caller takes from `git cat-file --batch-check`:
// the blob's id for each "<commit>:<path>", or "" when it names no blob.
func blobsByGit(t *testing.T, root string, specs []string) []string {
	t.Helper()
	out, err := gittest.TryInput(root, strings.Join(specs, "\n")+"\n", "cat-file", "--batch-check")
	if err != nil {
		t.Fatalf("git cat-file: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(specs) {
		t.Fatalf("git answered %d lines for %d specs", len(lines), len(specs))
	}
	blobs := make([]string, len(lines))
	for i, l := range lines {
		if oid, kind, _ := strings.Cut(l, " "); strings.HasPrefix(kind, "blob ") {
			blobs[i] = oid
		}
	}
	return blobs
}

// assertAsGit checks that every commit's every path reads as git reads
// it, in-process, with nothing left to git, the packs mapped and read.
func assertAsGit(t *testing.T, root string, commits, paths []string) {
	t.Helper()
	var specs []string
	for _, c := range commits {
		for _, p := range paths {
			specs = append(specs, c+":"+p)
		}
	}
	want := blobsByGit(t, root, specs)
	for name, open := range map[string]func(string) (*odb.DB, error){"mapped": odb.Open, "read": odb.OpenReading} {
		db, err := open(filepath.Join(root, ".git"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for i, spec := range specs {
			commit, path, _ := strings.Cut(spec, ":")
			e, ok, err := db.At(commit, path)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, spec, err)
			}
			got := ""
			if ok && e.Blob {
				got = e.ID
			}
			if got != want[i] {
				t.Errorf("%s, %s: blob %q in-process, %q by git", name, spec, got, want[i])
			}
		}
	}
}

// Every path at every commit reads as git reads it: loose, packed with
// offset deltas, packed with deltas naming their base by id, and spread
// over several packs and loose objects.
func TestAtReadsAsGit(t *testing.T) {
	for _, layout := range []string{"loose", "ofs-delta", "ref-delta", "packs-and-loose"} {
		t.Run(layout, func(t *testing.T) {
			root := t.TempDir()
			commits, paths := history(t, root)
			git := func(args ...string) string { t.Helper(); return gittest.Run(t, root, args...) }
			switch layout {
			case "ofs-delta":
				git("repack", "-a", "-d", "-f", "--depth=50", "--window=250")
			case "ref-delta":
				git("-c", "repack.useDeltaBaseOffset=false", "repack", "-a", "-d", "-f", "--depth=50", "--window=250")
			case "packs-and-loose":
				git("repack", "-a", "-d", "-f")
				gittest.WriteFiles(t, root, map[string]string{"dir/sub/c.txt": "after the first pack\n"})
				git("commit", "-q", "-am", "second pack")
				commits = append(commits, strings.TrimSpace(git("rev-parse", "HEAD")))
				git("repack", "-d")
				gittest.WriteFiles(t, root, map[string]string{"dir/new.txt": "loose\n"})
				git("add", ".")
				git("commit", "-q", "-m", "loose")
				commits = append(commits, strings.TrimSpace(git("rev-parse", "HEAD")))
				paths = append(paths, "dir/new.txt")
			}
			if layout != "loose" && layout != "packs-and-loose" {
				// The layout is what the test is about: trees stored as deltas.
				if v := git("verify-pack", "-v", packIndex(t, root)); !strings.Contains(v, "chain length = 2") {
					t.Fatalf("the repack made no delta chains:\n%s", v)
				}
			}
			assertAsGit(t, root, commits, paths)
		})
	}
}

func packIndex(t *testing.T, root string) string {
	t.Helper()
	idx, err := filepath.Glob(filepath.Join(root, ".git", "objects", "pack", "*.idx"))
	if err != nil || len(idx) != 1 {
		t.Fatalf("pack indexes %v, %v", idx, err)
	}
	return idx[0]
}

// What git would read otherwise than plainly is left to git: a path it
// takes relative to its working directory, a commit that is not a full
// id, one that is not there, and a SHA-256 repository.
func TestAtLeavesToGitWhatItMightReadOtherwise(t *testing.T) {
	root := t.TempDir()
	commits, _ := history(t, root)
	db, err := odb.Open(filepath.Join(root, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	head := commits[len(commits)-1]
	for _, spec := range []struct{ commit, path string }{
		{head, "../a.txt"}, {head, "./run.sh"}, {head, "dir/../run.sh"}, {head, "dir/"}, {head, ""}, {head, "/run.sh"},
		{head[:12], "run.sh"}, {strings.Repeat("0", 40), "run.sh"}, {"HEAD", "run.sh"},
	} {
		if _, _, err := db.At(spec.commit, spec.path); !errors.Is(err, odb.ErrUnsupported) {
			t.Errorf("%s:%s: err %v, want it left to git (ErrUnsupported)", spec.commit, spec.path, err)
		}
	}

	sha256 := t.TempDir()
	if out, err := gittest.Try(sha256, nil, "init", "-q", "--object-format=sha256"); err != nil {
		t.Skipf("this git makes no SHA-256 repositories: %v %s", err, out)
	}
	if _, err := odb.Open(filepath.Join(sha256, ".git")); !errors.Is(err, odb.ErrUnsupported) {
		t.Errorf("a SHA-256 repository opened with %v, want ErrUnsupported", err)
	}
}
