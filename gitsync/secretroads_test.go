package gitsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/gitsync/derive"
	"github.com/acolyte-dev/acolyte/gitsync/format"
	"github.com/acolyte-dev/acolyte/gitsync/internal/acolytedir"
	"github.com/acolyte-dev/acolyte/internal/gittest"
	"github.com/acolyte-dev/acolyte/internal/secrets"
	"github.com/acolyte-dev/acolyte/internal/secrets/secretstest"
	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/team"
)

// The text fields a memory carries, by the names the memories file gives
// them. Every road is tried with a credential in each field it accepts.
const (
	fContent = "content"
	fTopic   = "topic"
	fSource  = "source"
	fCommit  = "commit"
	fPaths   = "paths"
	fGlobs   = "globs"
	fID      = "id"
)

var allFields = []string{fContent, fTopic, fSource, fCommit, fPaths, fGlobs, fID}

// fieldValue is how a credential case is put into field: whole, or, for
// the fields that take only one line or one word (topic, id), its longest
// word. ok is false when the credential does not fit the field at all.
func fieldValue(field, content string) (string, bool) {
	switch field {
	case fTopic:
		if !strings.Contains(content, "\n") && len(content) <= memory.MaxTopicBytes {
			return content, true
		}
		w := longestRun(content, func(r rune) bool { return r != ' ' && r != '\n' && r != '\t' })
		_, found := secrets.Detect(w)
		return w, found && len(w) <= memory.MaxTopicBytes
	case fGlobs:
		// A glob is one line that must compile; the front matter reads
		// # as a comment and quotes as quoting.
		fits := func(g string) bool {
			return memory.ValidateGlob(g) == nil && !strings.ContainsAny(g, "#\"'")
		}
		if fits(content) {
			return content, true
		}
		w := longestRun(content, func(r rune) bool { return r > ' ' && !strings.ContainsRune("#\"'[]{}\\", r) })
		_, found := secrets.Detect(w)
		return w, found && fits(w)
	case fID:
		w := longestRun(content, func(r rune) bool {
			return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_'
		})
		// Only a word that is itself a credential makes an id that
		// carries one; the rest of the case is the content road's test.
		_, found := secrets.Detect(w)
		return w, found && len(w) <= 64
	}
	return content, true
}

func longestRun(s string, in func(rune) bool) string {
	best, start := "", -1
	for i, r := range s + "\x00" {
		switch {
		case in(r) && start < 0:
			start = i
		case !in(r) && start >= 0:
			if i-start > len(best) {
				best = s[start:i]
			}
			start = -1
		}
	}
	return best
}

// withField returns a stored project memory with value in field.
func withField(n int, field, value string) memory.Memory {
	m := stored(fmt.Sprintf("01SECRETROAD%04d", n), "Deploys go through the staging pipeline first.", t0)
	m.Commit = "3f786850e387550fdab836ed7e6dc881de23001b"
	switch field {
	case fContent:
		m.Content = value
	case fTopic:
		m.Topic = value
	case fSource:
		m.Source = value
	case fCommit:
		m.Commit = value
	case fPaths:
		m.Paths = []string{"docs/deploy.md", value}
	case fGlobs:
		m.Globs = []string{"deploy/**", value}
	case fID:
		m.ID = value
	}
	return m
}

// oneRoad is a road that takes one value at a time. start prepares it
// (a repository, a store) once per field; the function it returns stores
// value in field and reports whether the road refused it, failing the
// test on any error but a refusal.
type oneRoad struct {
	name   string
	fields []string
	start  func(t *testing.T, field string) func(value string) bool
}

// fileRoad is a road that reads a whole memories file: it is handed every
// memory at once and returns the ids it refused.
type fileRoad struct {
	name    string
	refused func(t *testing.T, mems []memory.Memory) map[string]bool
}

// TestEveryRoadRefusesEveryCredential sends the whole credential table,
// and the whole look-alike table, down every road into a store, in every
// text field the road accepts: remember and edit in every scope (the CLI,
// the MCP server, the agent and distill all write through Checkout), the
// team store's guard, an AGENTS.md rule, a seeds.json seed, `acolyte seed
// FILE`, and, for a hand-edited memories file, the merge driver, `acolyte
// check` and the pre-commit hook. sync shares derive with the AGENTS.md and
// seeds.json roads; the scripts secrets_sync.txtar and hooks_shared.txtar
// drive those through git.
func TestEveryRoadRefusesEveryCredential(t *testing.T) {
	runRoads(t, secretstest.Credentials, secretstest.Lookalikes, 1.0, 0)
}

// runRoads runs every road over creds and lookalikes, and fails when a road
// refuses fewer than want of the credentials it can carry, or more than
// maxFP look-alikes. Each road logs its figures.
func runRoads(t *testing.T, creds []secretstest.Case, lookalikes []string, want float64, maxFP int) {
	for _, road := range oneRoads() {
		for _, field := range road.fields {
			t.Run(road.name+"/"+field, func(t *testing.T) {
				refuses := road.start(t, field)
				var tried, missed, fp int
				for _, c := range creds {
					v, ok := fieldValue(field, c.Content)
					if !ok {
						continue
					}
					tried++
					if !refuses(v) {
						missed++
						reportMiss(t, want == 1, "%s let through %s in %s (%.24q…)", road.name, c.Kind, field, v)
					}
				}
				for _, h := range lookalikes {
					v, ok := fieldValue(field, h)
					if !ok || field == fID {
						continue
					}
					if refuses(v) {
						fp++
						reportMiss(t, maxFP == 0, "%s refused the harmless %q in %s", road.name, v, field)
					}
				}
				judge(t, road.name+"/"+field, tried, missed, fp, len(lookalikes), want, maxFP)
			})
		}
	}
	for _, road := range fileRoads() {
		for _, field := range allFields {
			t.Run(road.name+"/"+field, func(t *testing.T) {
				var mems []memory.Memory
				var kinds []string
				for _, c := range creds {
					if v, ok := fieldValue(field, c.Content); ok {
						m := withField(len(mems), field, v)
						if format.CheckMemory(m) != nil {
							continue // the file cannot hold it there at all
						}
						mems, kinds = append(mems, m), append(kinds, c.Kind)
					}
				}
				var harmless []memory.Memory
				if field != fID {
					for _, h := range lookalikes {
						m := withField(1000+len(harmless), field, h)
						if format.CheckMemory(m) == nil {
							harmless = append(harmless, m)
						}
					}
				}
				got := road.refused(t, append(append([]memory.Memory(nil), mems...), harmless...))
				missed, fp := 0, 0
				for i, m := range mems {
					if !got[m.ID] {
						missed++
						reportMiss(t, want == 1, "%s let through %s in %s", road.name, kinds[i], field)
					}
				}
				for _, m := range harmless {
					if got[m.ID] {
						fp++
						reportMiss(t, maxFP == 0, "%s refused the harmless %q in %s", road.name, m.Content+m.Topic+m.Source+m.Commit+strings.Join(m.Paths, ",")+strings.Join(m.Globs, ","), field)
					}
				}
				judge(t, road.name+"/"+field, len(mems), missed, fp, len(harmless), want, maxFP)
			})
		}
	}
}

// reportMiss fails the test at once when the road must be perfect (strict)
// and only logs otherwise: a held-out table is judged by its rates.
func reportMiss(t *testing.T, strict bool, format string, args ...any) {
	t.Helper()
	if strict {
		t.Errorf(format, args...)
		return
	}
	t.Logf(format, args...)
}

func judge(t *testing.T, name string, tried, missed, fp, harmless int, want float64, maxFP int) {
	t.Helper()
	t.Logf("%s: %d of %d credentials refused, %d of %d look-alikes refused", name, tried-missed, tried, fp, harmless)
	if tried == 0 {
		t.Fatalf("%s: no credential fits this field; the test proves nothing", name)
	}
	if float64(tried-missed) < want*float64(tried) {
		t.Errorf("%s refused %d of %d credentials, want at least %.0f%%", name, tried-missed, tried, 100*want)
	}
	if fp > maxFP {
		t.Errorf("%s refused %d look-alikes, want at most %d", name, fp, maxFP)
	}
}

func oneRoads() []oneRoad {
	add := func(scope memory.Scope) func(t *testing.T, field string) func(string) bool {
		return func(t *testing.T, field string) func(string) bool {
			w := workspaceIn(t)
			w.ws.Vis.SessionKey = "s-1"
			return func(v string) bool {
				d := memory.Draft{Scope: scope, Content: "Deploys go through the staging pipeline first " + fmt.Sprint(len(v)), Topic: "deploy", Source: "cli"}
				switch field {
				case fContent:
					d.Content = v
				case fTopic:
					d.Topic = v
				case fSource:
					d.Source = v
				case fGlobs:
					d.Globs = []string{"deploy/**", v}
				}
				_, err := w.Add(t.Context(), d)
				return refusal(t, err, v)
			}
		}
	}
	edit := func(scope memory.Scope) func(t *testing.T, field string) func(string) bool {
		return func(t *testing.T, field string) func(string) bool {
			w := workspaceIn(t)
			w.ws.Vis.SessionKey = "s-1"
			a, err := w.Add(t.Context(), memory.Draft{Scope: scope, Content: "Deploys go through the staging pipeline first.", Source: "cli"})
			if err != nil {
				t.Fatal(err)
			}
			return func(v string) bool {
				r := memory.Revision{Content: "Deploys go through the staging pipeline, always.", Topic: "deploy"}
				if field == fContent {
					r.Content = v
				} else {
					r.Topic = v
				}
				_, err := w.Edit(t.Context(), a.Memory.ID, r)
				return refusal(t, err, v)
			}
		}
	}
	return []oneRoad{
		{"remember project", []string{fContent, fTopic, fSource, fGlobs}, add(memory.ScopeProject)},
		{"remember user", []string{fContent, fTopic, fSource, fGlobs}, add(memory.ScopeUser)},
		{"remember session", []string{fContent, fTopic, fSource, fGlobs}, add(memory.ScopeSession)},
		{"edit project", []string{fContent, fTopic}, edit(memory.ScopeProject)},
		{"edit user", []string{fContent, fTopic}, edit(memory.ScopeUser)},
		{"team", []string{fContent, fTopic, fSource, fGlobs}, teamRoad},
		{"rule file front matter", []string{fGlobs}, func(t *testing.T, field string) func(string) bool {
			return func(v string) bool {
				root := t.TempDir()
				gittest.WriteFiles(t, root, map[string]string{
					"AGENTS.md":                "- Deploys go through the staging pipeline first.\n",
					".claude/rules/deploy.md":  "---\npaths:\n  - deploy/**\n  - " + v + "\n---\n- Releases are tagged from main only.\n",
					".cursor/rules/deploy.mdc": "---\nglobs: [deploy/**]\n---\n- Tag releases from main.\n",
				})
				d, err := derive.Worktree(root)
				if err != nil {
					t.Fatal(err)
				}
				keptOther(t, d.Memories, v)
				for _, m := range d.Memories {
					if slices.Contains(m.Globs, v) && m.Source != ".cursor/rules/deploy.mdc" {
						if _, found := format.FindSecret(m); found {
							t.Fatalf("a rule was derived with a credential in its globs: %s", m.ID)
						}
					}
				}
				noEcho(t, fmt.Sprint(d.Refused), v)
				return len(d.Refused) > 0
			}
		}},
		{"AGENTS.md", []string{fContent, fTopic}, func(t *testing.T, field string) func(string) bool {
			return func(v string) bool {
				root := t.TempDir()
				// A bullet is what the rules parser always turns into a rule; a
				// credential must be refused, not merely left underived. A
				// heading becomes the topic (lower-cased) and the source.
				agents := "# Rules\n\n- Deploys go through the staging pipeline first.\n- " + v + "\n"
				if field == fTopic {
					agents = "# Rules\n\n- Deploys go through the staging pipeline first.\n\n## " + v + "\n\n- Releases are tagged from main only.\n"
				}
				if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte(agents), 0o644); err != nil {
					t.Fatal(err)
				}
				d, err := derive.Worktree(root)
				if err != nil {
					t.Fatal(err)
				}
				keptOther(t, d.Memories, v)
				// A lone word is not a rule, so only longer text must be derived.
				if len(d.Refused) == 0 && len(d.Memories) != 2 && (len(strings.Fields(v)) > 1 || field == fTopic) {
					t.Fatalf("AGENTS.md with %.30q: neither refused nor derived: %+v", v, d.Memories)
				}
				noEcho(t, fmt.Sprint(d.Refused), v)
				return len(d.Refused) > 0
			}
		}},
		{"seeds.json", []string{fContent, fTopic}, func(t *testing.T, field string) func(string) bool {
			return func(v string) bool {
				root := t.TempDir()
				writeSeedField(t, filepath.Join(root, format.Dir, derive.SeedsFile), field, v)
				d, err := derive.Worktree(root)
				if err != nil {
					t.Fatal(err)
				}
				keptOther(t, d.Memories, v)
				noEcho(t, fmt.Sprint(d.Refused), v)
				return len(d.Refused) > 0
			}
		}},
		{"seed FILE", []string{fContent, fTopic}, func(t *testing.T, field string) func(string) bool {
			return func(v string) bool {
				root, elsewhere := t.TempDir(), filepath.Join(t.TempDir(), "team-seeds.json")
				writeSeedField(t, elsewhere, field, v)
				res, err := ImportSeeds(t.Context(), root, elsewhere)
				if err != nil {
					t.Fatal(err)
				}
				noEcho(t, fmt.Sprint(res.Refused), v)
				return len(res.Refused) > 0
			}
		}},
	}
}

// refusal reports whether err refuses a secret, failing on any other
// error and on a refusal that repeats the secret.
func refusal(t *testing.T, err error, value string) bool {
	t.Helper()
	if err != nil && !errors.Is(err, memory.ErrSecret) {
		t.Fatalf("storing %.30q: %v", value, err)
	}
	if err != nil {
		noEcho(t, err.Error(), value)
	}
	return errors.Is(err, memory.ErrSecret)
}

// noEcho fails when a message repeats the secret it refused.
func noEcho(t *testing.T, msg, value string) {
	t.Helper()
	if len(value) >= 12 && strings.Contains(msg, value) {
		t.Errorf("a refusal repeats the secret: %.80q", msg)
	}
}

// fakeTeam is a team database that accepts every write: the road under
// test is team.Toolkit's guard, which runs before the database is reached.
type fakeTeam struct{ memory.TeamEngine }

func (fakeTeam) Add(_ context.Context, _ memory.Visibility, d memory.Draft) (memory.Added, error) {
	return memory.Added{Memory: memory.Memory{ID: "01T", Scope: memory.ScopeTeam, Content: d.Content}}, nil
}

func teamRoad(t *testing.T, field string) func(string) bool {
	tk := team.Toolkit{Team: fakeTeam{}, Visibility: memory.Visibility{Team: "core"}, Refuse: RefuseSecret}
	return func(v string) bool {
		d := memory.Draft{Scope: memory.ScopeTeam, Content: "Deploys go through the staging pipeline first.", Source: "cli"}
		switch field {
		case fContent:
			d.Content = v
		case fTopic:
			d.Topic = v
		case fSource:
			d.Source = v
		case fGlobs:
			d.Globs = []string{"deploy/**", v}
		}
		_, err := tk.Add(t.Context(), d)
		return refusal(t, err, v)
	}
}

func fileRoads() []fileRoad {
	return []fileRoad{
		{"merge driver", func(t *testing.T, mems []memory.Memory) map[string]bool {
			merged, report, err := format.Merge(nil, format.Encode(mems), format.Encode(nil))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range mems {
				if _, found := secrets.Detect(m.ID); found {
					noEcho(t, strings.Join(report, "\n"), m.ID)
				}
			}
			kept, err := format.Decode("", merged)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]bool{}
			for _, m := range mems {
				out[m.ID] = true
			}
			for _, m := range kept {
				delete(out, m.ID)
			}
			return out
		}},
		{"check", func(t *testing.T, mems []memory.Memory) map[string]bool {
			root := t.TempDir()
			data := format.Encode(mems)
			if err := os.MkdirAll(filepath.Join(root, format.Dir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(format.MemoriesPath(root), data, 0o644); err != nil {
				t.Fatal(err)
			}
			report, err := Check(root)
			if err != nil {
				t.Fatal(err)
			}
			return byLine(t, data, mems, report.Problems, func(p Problem) (int, string) { return p.Line, p.Message })
		}},
		{"pre-commit", func(t *testing.T, mems []memory.Memory) map[string]bool {
			w := workspaceIn(t)
			data := format.Encode(mems)
			if err := os.MkdirAll(filepath.Join(w.Repo.Root, format.Dir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(format.MemoriesPath(w.Repo.Root), data, 0o644); err != nil {
				t.Fatal(err)
			}
			runGit(t, w.Repo.Root, "add", format.Dir+"/"+format.MemoriesFile)
			res, err := w.RunHook(t.Context(), "pre-commit", nil)
			if err != nil && !errors.Is(err, ErrRefused) {
				t.Fatal(err)
			}
			return byLine(t, data, mems, res.Refused, func(f derive.Refusal) (int, string) { return f.Line, f.Message })
		}},
	}
}

// byLine maps the problems a road reported, by line, to the ids of the
// memories on those lines, and fails on a message that repeats a secret.
func byLine[P any](t *testing.T, data []byte, mems []memory.Memory, problems []P, at func(P) (int, string)) map[string]bool {
	t.Helper()
	ids := map[int]string{}
	for id, line := range acolytedir.LineNumbers(data) {
		ids[line] = id
	}
	out := map[string]bool{}
	for _, p := range problems {
		line, msg := at(p)
		for _, m := range mems {
			for _, f := range m.Fields() {
				v := f.Text
				if _, found := secrets.Detect(v); found {
					noEcho(t, msg, v)
				}
			}
		}
		if id, ok := ids[line]; ok {
			out[id] = true
		}
	}
	return out
}

// keptOther fails unless the harmless neighbour of content was derived: a
// refusal costs only the one rule or seed.
func keptOther(t *testing.T, mems []memory.Memory, content string) {
	t.Helper()
	for _, m := range mems {
		if strings.Contains(m.Content, "staging pipeline") {
			return
		}
	}
	t.Fatalf("with %.30q beside it, the harmless rule or seed was not kept", content)
}

// writeSeedField writes a seeds file holding a harmless seed and one with
// value in field (content or topic).
func writeSeedField(t *testing.T, path, field, value string) {
	t.Helper()
	seed := map[string]string{"content": value}
	if field == fTopic {
		seed = map[string]string{"content": "Releases are tagged from main only.", "topic": value}
	}
	data, err := json.Marshal([]any{"Deploys go through the staging pipeline first.", seed})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUnseenCredentialsOnEveryRoad measures every road against the two
// held-out tables: at least 95% of its credentials refused in every field
// a road carries, and at most one of its look-alikes. Each subtest logs
// its figures (go test ./gitsync -run TestUnseen -v).
func TestUnseenCredentialsOnEveryRoad(t *testing.T) {
	t.Run("unseen", func(t *testing.T) { runRoads(t, secretstest.Unseen, secretstest.UnseenLookalikes, 0.95, 1) })
	t.Run("fresh", func(t *testing.T) { runRoads(t, secretstest.Fresh, secretstest.FreshLookalikes, 0.95, 1) })
}
