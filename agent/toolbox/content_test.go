package toolbox

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestAttributeChanges(t *testing.T) {
	for _, c := range []struct {
		before, after string
		refused       bool
	}{
		{"", "*.go text\n", false},
		{"*.go merge=union\n", "", true},
		{"*.go merge=union\n*.sh text\n", "*.sh text\n", true},
		{"*.go merge=union\n*.go -merge\n", "*.go -merge\n*.go merge=union\n", true},
		{"*.go merge=union\n*.sh text\n", "*.go merge=union\n*.sh text eol=lf\n*.md text\n", false},
		{"*.go merge=union\n", "# comment\n*.go   merge=union\n", false},
		{"*.go diff=golang\n", "*.go diff=golang\n*.md text\n", false},
		{"", "*.go merge=union\n", true},
		{"*.go merge=ours\n", "*.go merge=union\n", true},
		{"", "*.go Merge=union\n", true},
		{"", "*.go -diff\n", true},
		{"", "*.go !merge\n", true},
		{"", "*.go binary\n", true},
		{"", "*.go\tfilter=lfs\n", true},
		{"", "\"a b.go\" merge=union\n", true},
		{"", "*.go textconv=x\n", true},
		{"*.go merge=union\n", "*.go merge=union\n*.c merge=union\n", true},
		{"", "[attr]q merge=union\n", true},
		{"[attr]q merge=union\n", "[attr]q merge=union\n*.go q\n", true},
		{"", "*.go text eol=lf\r\n", false},
		{"", "*.md linguist-generated=true -whitespace export-ignore\n", false},
		{"", "*.go quiet\n", true},
		{"", "*.go generated\n", true},
		{"", "[attr]lf text eol=lf\n", true},
	} {
		err := checkAttributes(".gitattributes", []byte(c.before), []byte(c.after))
		if (err != nil) != c.refused {
			t.Errorf("%q -> %q: refused=%v, want %v (%v)", c.before, c.after, err != nil, c.refused, err)
		}
		if err != nil && AsError(err).Code != CodeDenied {
			t.Errorf("%q: code %s", c.after, AsError(err).Code)
		}
	}
	for _, name := range []string{".gitattributes", ".GITATTRIBUTES", ".gitattributes.", ".gitattributes::$DATA"} {
		if !isAttributesFile(name) {
			t.Errorf("%s is not taken for .gitattributes", name)
		}
	}
	if isAttributesFile("gitattributes") || isAttributesFile(".gitattributes.md") {
		t.Error("a look-alike is taken for .gitattributes")
	}
}

func TestSubmoduleChanges(t *testing.T) {
	const base = "[submodule \"lib\"]\n\tpath = lib\n\turl = https://example.com/lib.git\n"
	for _, c := range []struct {
		before, after string
		refused       bool
	}{
		{base, base + "\tbranch = main\n", false},
		{base, "", true},
		{base + "\turl = https://example.com/b.git\n", "[submodule \"lib\"]\n\turl = https://example.com/b.git\n\turl = https://example.com/lib.git\n", true},
		{base, "[submodule \"lib\"]\n  path = lib\n  url = \"https://example.com/lib.git\"\n", false},
		{base, strings.Replace(base, "example.com", "evil.example", 1), true},
		{base, base + "[submodule \"x\"]\n\tpath = x\n\turl = ../x.git\n", true},
		{base, base + "\tupdate = rebase\n", true},
		{"", "[submodule \"x\"] url = https://evil.example/x\n", true},
	} {
		err := checkSubmodules(".gitmodules", []byte(c.before), []byte(c.after))
		if (err != nil) != c.refused {
			t.Errorf("%q -> %q: refused=%v, want %v (%v)", c.before, c.after, err != nil, c.refused, err)
		}
	}
	if !isModulesFile(".GITMODULES") || isModulesFile("gitmodules") {
		t.Error("isModulesFile")
	}
}

// A .gitattributes that cannot be read as text is not replaced: judging the
// new content alone would let a write drop a -merge the old one set.
func TestUnreadableAttributesAreNotReplaced(t *testing.T) {
	w, _ := newTestWorkspace(t)
	writeTestFile(t, filepath.Join(w.Root, ".gitattributes"), "*.go -merge\x00\n")
	_, err := callTool(t, w.Tools(), "write_file", map[string]any{"path": ".gitattributes", "content": "*.sh text\n"})
	wantCode(t, err, CodeBinaryFile)
	if err == nil || !strings.Contains(err.Error(), "not replaced") {
		t.Fatalf("the refusal does not say why: %v", err)
	}
}
