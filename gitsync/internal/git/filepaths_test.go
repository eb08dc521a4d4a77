package git

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/internal/gittest"
)

func TestRelPathNamesFilesFromTheRoot(t *testing.T) {
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q")
	gittest.WriteFiles(t, root, map[string]string{"migrations/1.sql": "", "web/app/page.tsx": ""})
	repo, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(repo.Root, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(repo.Root, "web"))
	for p, want := range map[string]string{
		"app/page.tsx":        "web/app/page.tsx",
		"app/new.tsx":         "web/app/new.tsx", // about to be created
		"../migrations/1.sql": "migrations/1.sql",
		filepath.Join(repo.Root, "migrations/2.sql"): "migrations/2.sql",
		filepath.Join(link, "web/app/page.tsx"):      "web/app/page.tsx",
	} {
		if got, err := repo.RelPath(p); err != nil || got != want {
			t.Errorf("RelPath(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	for _, p := range []string{"../../elsewhere.go", "/etc/passwd", "../.."} {
		if got, err := repo.RelPath(p); err == nil || !strings.Contains(err.Error(), "outside the repository") {
			t.Errorf("RelPath(%q) = %q, %v; want it refused as outside", p, got, err)
		}
	}
	if _, err := repo.RelPath(".."); err == nil || !strings.Contains(err.Error(), "the repository's root") {
		t.Errorf("RelPath of the root: %v", err)
	}
	// From outside the working tree (acolyte --repo DIR), a relative path
	// is taken from the root.
	t.Chdir(t.TempDir())
	if got, err := repo.RelPath("migrations/1.sql"); err != nil || got != "migrations/1.sql" {
		t.Errorf("from outside, RelPath = %q, %v", got, err)
	}
}
