package toolbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// isAttributesFile says whether a file name is .gitattributes, in any
// spelling a filesystem git runs on takes for it.
func isAttributesFile(name string) bool { return normalizeName(name) == ".gitattributes" }

// harmlessAttrs are the attributes git defines that choose no program and
// hide nothing: line endings, encodings, whitespace checks, git archive.
// Every other attribute is guarded: merge=union resolves a real conflict
// silently, a filter runs on checkout and commit, diff= and textconv run
// drivers, -diff (or binary) hides a change from git diff, and a name git
// does not define may be a macro, defined in the top-level .gitattributes,
// .git/info/attributes or core.attributesFile, that sets any of them.
var harmlessAttrs = map[string]bool{
	"text": true, "eol": true, "crlf": true, "ident": true, "whitespace": true, "export-ignore": true,
	"export-subst": true, "delta": true, "encoding": true, "working-tree-encoding": true,
	"conflict-marker-size": true, "lockable": true,
}

func harmlessAttr(name string) bool {
	return harmlessAttrs[name] || strings.HasPrefix(name, "linguist-")
}

// checkAttributes refuses an edit of a .gitattributes file that changes
// the guarded attributes it assigns: adds one, changes one, and also
// removes or reorders one, since a later line overrides an earlier one and
// taking *.go -merge away can expose *.go merge=union above it. Any other
// change is fine. The check compares what each version assigns, line by
// line, so it holds however the edit is spelled.
func checkAttributes(p string, before, after []byte) error {
	change := guardedChange(attrAssignments(before), attrAssignments(after))
	if change == "" {
		return nil
	}
	return errorf(CodeDenied, "%s: the change %s in .gitattributes; merge=, filter=, diff=, textconv, binary and macros choose "+
		"the programs git runs on those files and how their conflicts resolve (merge=union merges a real conflict silently), "+
		"so the file tools do not add, change, remove or reorder them, nor attributes git does not define, which may be macros. "+
		"Only text, eol, whitespace, encoding, export and linguist- attributes may change. Leave the other lines as they are and "+
		"tell the user the line to change, if one is needed", shown(p), change)
}

// guardedChange describes how the guarded settings after differ from
// before, in order, or is "" when they are the same.
func guardedChange(before, after []string) string {
	if slices.Equal(before, after) {
		return ""
	}
	had, has := map[string]bool{}, map[string]bool{}
	for _, s := range before {
		had[s] = true
	}
	for _, s := range after {
		has[s] = true
	}
	var added, removed []string
	for _, s := range after {
		if !had[s] {
			added = append(added, strings.Replace(s, "\x00", " ", 1))
		}
	}
	for _, s := range before {
		if !has[s] {
			removed = append(removed, strings.Replace(s, "\x00", " ", 1))
		}
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "sets "+clip(strings.Join(added, ", "), 300))
	}
	if len(removed) > 0 {
		parts = append(parts, "removes "+clip(strings.Join(removed, ", "), 300))
	}
	if len(parts) == 0 {
		parts = append(parts, "reorders them, to "+clip(strings.ReplaceAll(strings.Join(after, ", "), "\x00", " "), 300))
	}
	return strings.Join(parts, " and ")
}

// attrAssignments returns, in order, "pattern\x00attribute" for every
// guarded attribute each line of a .gitattributes sets, unsets or gives a
// value, and for every attribute of every macro definition.
func attrAssignments(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		pattern, attrs, ok := parseAttrLine(l)
		if !ok {
			continue
		}
		macro := strings.HasPrefix(pattern, "[attr]")
		for _, a := range attrs {
			if macro || !harmlessAttr(attrName(a)) {
				out = append(out, pattern+"\x00"+a)
			}
		}
	}
	return out
}

// parseAttrLine splits one .gitattributes line into its pattern, which may
// be quoted, and its attributes; comments and blank lines give false.
func parseAttrLine(l string) (string, []string, bool) {
	l = strings.TrimSpace(strings.TrimSuffix(l, "\r"))
	if l == "" || l[0] == '#' {
		return "", nil, false
	}
	var pattern, rest string
	if l[0] == '"' {
		end := 1
		for end < len(l) && l[end] != '"' {
			if l[end] == '\\' {
				end++
			}
			end++
		}
		pattern, rest = l[:min(end+1, len(l))], l[min(end+1, len(l)):]
	} else {
		pattern, rest, _ = strings.Cut(strings.ReplaceAll(l, "\t", " "), " ")
	}
	return pattern, strings.Fields(rest), true
}

// attrName is an attribute's name without its -, ! or =value, folded, as
// git compares attribute names case-sensitively but a human would not
// notice Merge=.
func attrName(a string) string {
	a = strings.TrimLeft(a, "-!")
	name, _, _ := strings.Cut(a, "=")
	return strings.ToLower(name)
}

// guardContent applies the checks that depend on what a write would put
// in a file, not only on where it goes.
func guardContent(p, rel string, before, after []byte) error {
	switch name := filepath.Base(rel); {
	case isAttributesFile(name):
		return checkAttributes(p, before, after)
	case isModulesFile(name):
		return checkSubmodules(p, before, after)
	}
	return nil
}

// isModulesFile says whether a file name is .gitmodules, in any spelling.
func isModulesFile(name string) bool { return normalizeName(name) == ".gitmodules" }

// needsBefore says whether guardContent compares a write with what it
// replaces, so that only those files are read first.
func needsBefore(rel string) bool {
	name := filepath.Base(rel)
	return isAttributesFile(name) || isModulesFile(name)
}

// checkSubmodules refuses an edit of .gitmodules that changes a
// submodule's url or update (adds, changes, removes or reorders one, the
// last of a key winning): the url decides what code git submodule update
// fetches and checks out into the tree, update how. git itself refuses
// update=!command from .gitmodules; a url to another repository it cannot
// tell from an honest one.
func checkSubmodules(p string, before, after []byte) error {
	change := guardedChange(submoduleSettings(before), submoduleSettings(after))
	if change == "" {
		return nil
	}
	return errorf(CodeDenied, "%s: the change %s in .gitmodules; a submodule's url decides what code git fetches and checks out "+
		"into the tree, and update how, so the file tools do not change them. Tell the user the submodule to add or change "+
		"(git submodule add URL PATH, git submodule set-url PATH URL)", shown(p), change)
}

// submoduleSettings returns, in order, "[section]\x00key=value" for every
// url and update a git-config-style file sets, read loosely: a line the
// parse gets wrong can only make a harmless change look like a new setting.
func submoduleSettings(data []byte) []string {
	var out []string
	section := ""
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(strings.TrimSuffix(l, "\r"))
		if strings.HasPrefix(l, "[") {
			end := strings.IndexByte(l, ']')
			if end < 0 {
				end = len(l) - 1
			}
			section = strings.ToLower(strings.Join(strings.Fields(l[:end+1]), " "))
			l = strings.TrimSpace(l[end+1:])
		}
		key, value, _ := strings.Cut(l, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if key == "url" || key == "update" {
			value = strings.Trim(strings.TrimSpace(value), `"`)
			out = append(out, section+"\x00"+key+"="+value)
		}
	}
	return out
}

// readBefore reads what a write is about to replace, for guardContent,
// which must see it: a file it cannot read (too large, not text) is not
// replaced, since judging the new content alone would let a write drop
// what the old one set.
func readBefore(root *os.Root, rel, p string) ([]byte, error) {
	data, _, err := readWhole(root, rel, p)
	if err != nil {
		te := AsError(err)
		return nil, errorf(te.Code, "%s; it is not replaced, since what it sets could not be compared with the new content", te.Message)
	}
	return data, nil
}
