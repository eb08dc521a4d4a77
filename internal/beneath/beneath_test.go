package beneath

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// attackTree is a repository a clone might bring: files, a link inside,
// and links and names that lead out to a secret beside it.
func attackTree(t *testing.T) (root, secret string) {
	t.Helper()
	top := t.TempDir()
	root = filepath.Join(top, "repo")
	secret = filepath.Join(top, "secret.txt")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(secret, []byte("the deploy key"), 0o600))
	must(os.MkdirAll(filepath.Join(root, "src", "deep"), 0o755))
	must(os.WriteFile(filepath.Join(root, "src", "deep", "a.go"), []byte("package a\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "big.txt"), bytes.Repeat([]byte("x"), 70_000), 0o644))
	if runtime.GOOS == "windows" {
		return root, secret
	}
	must(os.Symlink("deep/a.go", filepath.Join(root, "src", "inside.go")))
	must(os.Symlink(secret, filepath.Join(root, "absolute-out")))
	must(os.Symlink("../secret.txt", filepath.Join(root, "relative-out")))
	must(os.Symlink("..", filepath.Join(root, "src", "up")))
	must(os.Symlink("/proc/self/root"+secret, filepath.Join(root, "magic-out")))
	return root, secret
}

// Every name a memory might cite reads as os.Root reads it: the same
// bytes or status inside, and an error, never the secret, for a way out.
func TestReadsAsOSRootDoes(t *testing.T) {
	root, secret := attackTree(t)
	names := []string{
		"src/deep/a.go", "big.txt", "src/inside.go", "src/deep", // inside
		"absolute-out", "relative-out", "src/up/up/secret.txt", "magic-out", "../secret.txt", // out
		secret[1:], "src/../src/deep/a.go", "src/deep/a.go/x", "missing.go", "src/missing/a.go", "", ".",
	}
	for _, fallBack := range []bool{false, true} {
		d, err := Open(root)
		if err != nil {
			t.Fatal(err)
		}
		if fallBack {
			forceFallBack(d)
		}
		osRoot, err := os.OpenRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			got, gotErr := d.ReadFile(name)
			want, wantErr := osRoot.ReadFile(name)
			if bytes.Contains(got, []byte("deploy key")) {
				t.Errorf("fallBack %v: ReadFile(%q) read the secret outside", fallBack, name)
			}
			if !bytes.Equal(got, want) || (gotErr == nil) != (wantErr == nil) || errors.Is(gotErr, fs.ErrNotExist) != errors.Is(wantErr, fs.ErrNotExist) {
				t.Errorf("fallBack %v: ReadFile(%q) = %d bytes, %v; os.Root: %d bytes, %v", fallBack, name, len(got), gotErr, len(want), wantErr)
			}
			fi, gotErr := d.Stat(name)
			wfi, wantErr := osRoot.Stat(name)
			if (gotErr == nil) != (wantErr == nil) || errors.Is(gotErr, fs.ErrNotExist) != errors.Is(wantErr, fs.ErrNotExist) {
				t.Errorf("fallBack %v: Stat(%q) = %v; os.Root: %v", fallBack, name, gotErr, wantErr)
				continue
			}
			if gotErr == nil && (fi.Size() != wfi.Size() || !fi.ModTime().Equal(wfi.ModTime()) || fi.Mode() != wfi.Mode()) {
				t.Errorf("fallBack %v: Stat(%q) = %d %v %v; os.Root: %d %v %v", fallBack, name, fi.Size(), fi.ModTime(), fi.Mode(), wfi.Size(), wfi.ModTime(), wfi.Mode())
			}
		}
		osRoot.Close()
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}
}
