package toolbox

import (
	"os"
	"path/filepath"
	"sort"
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

// checkAttributes refuses an edit of a .gitattributes file that adds or
// changes a guarded attribute or a macro; removing one, or any other
// change, is fine. The check compares what each version assigns, line by
// line, so it holds however the edit is spelled.
func checkAttributes(p string, before, after []byte) error {
	had := attrAssignments(before)
	var added []string
	for a := range attrAssignments(after) {
		if !had[a] {
			added = append(added, strings.Replace(a, "\x00", " ", 1))
		}
	}
	if len(added) == 0 {
		return nil
	}
	sort.Strings(added)
	return errorf(CodeDenied, "%s: the change sets %s in .gitattributes; merge=, filter=, diff=, textconv, binary and macros choose "+
		"the programs git runs on those files and how their conflicts resolve (merge=union merges a real conflict silently), "+
		"so the file tools do not add or change them, nor attributes git does not define, which may be macros. Only text, eol, "+
		"whitespace, encoding, export and linguist- attributes may be added. Leave the other lines as they are and tell the user the line to add, if one is needed",
		shown(p), clip(strings.Join(added, ", "), 300))
}

// attrAssignments returns "pattern\x00attribute" for every guarded
// attribute each line of a .gitattributes sets, unsets or gives a value,
// and for every attribute of every macro definition.
func attrAssignments(data []byte) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		pattern, attrs, ok := parseAttrLine(l)
		if !ok {
			continue
		}
		macro := strings.HasPrefix(pattern, "[attr]")
		for _, a := range attrs {
			if macro || !harmlessAttr(attrName(a)) {
				out[pattern+"\x00"+a] = true
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

// checkSubmodules refuses an edit of .gitmodules that adds or changes a
// submodule's url or update: the url decides what code git submodule update
// fetches and checks out into the tree, update how. git itself refuses
// update=!command from .gitmodules; a url to another repository it cannot
// tell from an honest one.
func checkSubmodules(p string, before, after []byte) error {
	had := submoduleSettings(before)
	var added []string
	for s := range submoduleSettings(after) {
		if !had[s] {
			added = append(added, strings.Replace(s, "\x00", " ", 1))
		}
	}
	if len(added) == 0 {
		return nil
	}
	sort.Strings(added)
	return errorf(CodeDenied, "%s: the change sets %s in .gitmodules; a submodule's url decides what code git fetches and checks out "+
		"into the tree, and update how, so the file tools do not add or change them. Tell the user the submodule to add "+
		"(git submodule add URL PATH does it)", shown(p), clip(strings.Join(added, ", "), 300))
}

// submoduleSettings returns "[section]\x00key=value" for every url and
// update a git-config-style file sets, read loosely: a line the parse gets
// wrong can only make a harmless change look like a new setting.
func submoduleSettings(data []byte) map[string]bool {
	out := map[string]bool{}
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
			out[section+"\x00"+key+"="+value] = true
		}
	}
	return out
}

// readBefore reads what a write is about to replace, for guardContent. A
// file too large or unreadable counts as empty, which judges the new
// content alone: stricter, never looser.
func readBefore(root *os.Root, rel string) []byte {
	data, _, err := readWhole(root, rel, rel)
	if err != nil {
		return nil
	}
	return data
}
