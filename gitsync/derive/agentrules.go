package derive

import (
	"path"
	"strconv"
	"strings"

	"github.com/acolyte-dev/acolyte/memory"
)

// Other agents' rule files, read beside AGENTS.md, CLAUDE.md and GEMINI.md.
// Each is one agent's convention for rules kept out of the main file; the
// ones in folders carry front matter saying where they apply.
var agentRuleDirs = []struct{ dir, suffix string }{
	{".claude/rules/", ".md"},                     // Claude Code, front matter `paths:`
	{".cursor/rules/", ".mdc"},                    // Cursor, `globs:`, `alwaysApply:`, `description:`
	{".github/instructions/", ".instructions.md"}, // GitHub Copilot, `applyTo:`
}

// copilotInstructions is GitHub Copilot's repository-wide instruction file.
const copilotInstructions = ".github/copilot-instructions.md"

// isAgentRuleFile says whether rel (slash-separated, from the root) is one
// of the other agents' rule files. They are read at the root only: each
// agent reads them from the repository root.
func isAgentRuleFile(rel string) bool {
	if rel == copilotInstructions {
		return true
	}
	for _, d := range agentRuleDirs {
		if strings.HasPrefix(rel, d.dir) && strings.HasSuffix(rel, d.suffix) && len(rel) > len(d.dir)+len(d.suffix) {
			return true
		}
	}
	return false
}

// IsInstructionPath says whether rel is an instruction file acolyte reads.
func IsInstructionPath(rel string) bool {
	return isInstructionName(path.Base(rel)) || isAgentRuleFile(rel)
}

// FrontMatter is what a rule file's front matter says about its rules.
type FrontMatter struct {
	// Globs are the paths the rules apply to: Claude Code's `paths`,
	// Cursor's `globs`, Copilot's `applyTo`.
	Globs []string
	// AlwaysApply is Cursor's `alwaysApply`: the rules apply everywhere.
	AlwaysApply bool
	// Description is what the rules are about (Cursor, Copilot).
	Description string
}

// maxFrontMatterLines bounds the front matter: a file that opens with ---
// and never closes it is a document that starts with a thematic break.
const maxFrontMatterLines = 100

// ParseFrontMatter splits a leading `---` … `---` block off src. body keeps
// the front matter's lines as blank ones, so a rule's line number stays the
// file's. It reads the few keys rule files use, as YAML scalars, flow lists
// ([a, b]), block lists (- a) or comma-separated strings (Cursor's and
// Copilot's `a/**, *.ts`); other keys are ignored, never indexed as text.
func ParseFrontMatter(src string) (fm FrontMatter, body string, found bool) {
	lines := strings.SplitAfter(src, "\n")
	if len(lines) < 2 || strings.TrimRight(strings.TrimPrefix(lines[0], "\ufeff"), "\r\n \t") != "---" {
		return FrontMatter{}, src, false
	}
	end := -1
	for i := 1; i < len(lines) && i <= maxFrontMatterLines; i++ {
		if strings.TrimRight(lines[i], "\r\n \t") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return FrontMatter{}, src, false
	}
	var key string
	for _, raw := range lines[1:end] {
		line := strings.TrimRight(raw, "\r\n")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if item, ok := strings.CutPrefix(trimmed, "- "); ok && line != trimmed {
			fm.add(key, item, true)
			continue
		}
		if line != trimmed {
			continue // a nested value of a key acolyte does not read
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			key = ""
			continue
		}
		key = strings.TrimSpace(k)
		if v = strings.TrimSpace(v); v != "" {
			fm.add(key, v, false)
		}
	}
	body = strings.Repeat("\n", strings.Count(strings.Join(lines[:end+1], ""), "\n")) + strings.Join(lines[end+1:], "")
	return fm, body, true
}

// add records one value of key; item is one element of a block list.
func (fm *FrontMatter) add(key, value string, item bool) {
	value = stripComment(value)
	switch key {
	case "paths", "globs", "applyTo":
		var parts []string
		if inner, ok := strings.CutPrefix(value, "["); ok && !item {
			inner, _ = strings.CutSuffix(inner, "]")
			parts = splitGlobList(inner)
		} else if item {
			parts = []string{value}
		} else {
			parts = splitGlobList(unquote(value))
		}
		for _, p := range parts {
			if p = unquote(strings.TrimSpace(p)); p != "" {
				fm.Globs = append(fm.Globs, p)
			}
		}
	case "alwaysApply":
		fm.AlwaysApply = unquote(value) == "true"
	case "description":
		if !item {
			fm.Description = unquote(value)
		}
	}
}

// splitGlobList splits a comma-separated list of globs at the commas that
// separate them: not those inside a glob's {a,b} alternatives or [class],
// nor inside quotes (`**/*.{ts,tsx}, "a,b"` is two globs).
func splitGlobList(s string) []string {
	var (
		parts        []string
		depth, start int
		quote        byte
	)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '\\':
			i++
		case c == '{' || c == '[':
			depth++
		case (c == '}' || c == ']') && depth > 0:
			depth--
		case c == ',' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// AppliesTo is where the file's rules apply, as memory.Memory.Globs keeps
// it: everywhere (memory.AlwaysGlob) for Cursor's alwaysApply, which
// overrides its globs as in Cursor; the globs otherwise; nil when the
// front matter names no paths, and the rules apply wherever their meaning
// does.
func (fm FrontMatter) AppliesTo() []string {
	if fm.AlwaysApply {
		return []string{memory.AlwaysGlob}
	}
	return memory.NormalizeGlobs(fm.Globs)
}

// stripComment drops a YAML comment: a # after a space, outside quotes.
func stripComment(v string) string {
	quote := byte(0)
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#' && i > 0 && (v[i-1] == ' ' || v[i-1] == '\t'):
			return strings.TrimSpace(v[:i])
		}
	}
	return strings.TrimSpace(v)
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		if s, err := strconv.Unquote(v); err == nil {
			return s
		}
	}
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

// scopePrefix is what starts each rule of a file whose front matter scopes
// it, as "In docs/: " starts a nested AGENTS.md's, so that a search result
// says where the rule applies.
func (fm FrontMatter) scopePrefix() string {
	if fm.AlwaysApply || len(fm.Globs) == 0 {
		return ""
	}
	return "For " + strings.Join(fm.Globs, ", ") + ": "
}

// Import is one `@path` line of a CLAUDE.md: Claude Code reads the file it
// names as part of the instructions.
type Import struct {
	Path string
	Line int
}

// maxImportDepth is how many hops of imports Claude Code follows.
const maxImportDepth = 5

// SplitImports takes the `@path` import lines (alone on their line, or as
// the only text of a list item) out of a CLAUDE.md. body has a blank line
// in their place, so an import never joins the rule above it and line
// numbers stay the file's. Lines in code fences are text, as Claude Code
// reads them.
func SplitImports(src string) (body string, imports []Import) {
	lines := strings.SplitAfter(src, "\n")
	fence := ""
	for i, raw := range lines {
		t := strings.TrimSpace(raw)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		if item, ok := strings.CutPrefix(t, "- "); ok {
			t = strings.TrimSpace(item)
		}
		p, ok := strings.CutPrefix(t, "@")
		if !ok || p == "" || strings.ContainsAny(p, " \t") {
			continue
		}
		imports = append(imports, Import{Path: p, Line: i + 1})
		lines[i] = "\n"
		if !strings.HasSuffix(raw, "\n") {
			lines[i] = ""
		}
	}
	return strings.Join(lines, ""), imports
}

// resolveImport is the slash-separated path from the root that an import
// in the file from names, or false when it names a file outside the
// repository (an absolute path, ~/, or too many ..).
func resolveImport(from, p string) (string, bool) {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.Contains(p, "\\") {
		return "", false
	}
	rel := path.Clean(path.Join(path.Dir(from), p))
	if rel == ".." || strings.HasPrefix(rel, "../") || rel == "." {
		return "", false
	}
	return rel, true
}
