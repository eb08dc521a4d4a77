package cmd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/cmd"
	"github.com/acolyte-dev/acolyte/internal/pgtest"
)

// docField is one row of a table in cmd/JSON.md.
type docField struct {
	path     []string
	optional bool // "omitted when ..."
	opaque   bool // its inside is not part of the contract
}

// jsonDoc is cmd/JSON.md: the fields of every command's --json output.
type jsonDoc map[string][]docField

var docRow = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]+) \\|")

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(strings.ReplaceAll(p, "[]", ".[]"), ".") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// readJSONDoc parses the tables of cmd/JSON.md: objects under "## Objects",
// commands under "## Commands", each a "### name" heading over a table.
func readJSONDoc(t *testing.T) jsonDoc {
	t.Helper()
	f, err := os.Open("JSON.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type row struct {
		path, typ string
	}
	objects, commands := map[string][]row{}, map[string][]row{}
	var section, name string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section, name = strings.TrimPrefix(line, "## "), ""
		case strings.HasPrefix(line, "### "):
			name = strings.TrimPrefix(line, "### ")
		case name != "":
			m := docRow.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			r := row{m[1], strings.TrimSpace(m[2])}
			switch section {
			case "Objects":
				objects[name] = append(objects[name], r)
			case "Commands":
				commands[name] = append(commands[name], r)
			}
		}
	}
	var expand func(prefix []string, rows []row, depth int) []docField
	expand = func(prefix []string, rows []row, depth int) []docField {
		if depth > 5 {
			t.Fatal("JSON.md: objects refer to each other in a loop")
		}
		var out []docField
		for _, r := range rows {
			p := append(slices.Clone(prefix), splitPath(r.path)...)
			out = append(out, docField{p, strings.Contains(r.typ, "omitted when"), strings.Contains(r.typ, "opaque")})
			typeName, _, _ := strings.Cut(r.typ, ",")
			if obj, ok := objects[strings.TrimSpace(typeName)]; ok {
				out = append(out, expand(p, obj, depth+1)...)
			}
		}
		return out
	}
	doc := jsonDoc{}
	for name, rows := range commands {
		doc[name] = expand(nil, rows, 0)
	}
	snake := regexp.MustCompile(`^([a-z][a-z0-9_]*|\[\]|<[a-z]+>)$`)
	for name, fields := range doc {
		for _, f := range fields {
			for _, seg := range f.path {
				if !snake.MatchString(seg) {
					t.Errorf("JSON.md, %s: field %s is not snake_case", name, strings.Join(f.path, "."))
				}
			}
		}
	}
	if len(doc) < 10 {
		t.Fatalf("JSON.md documents only %d commands", len(doc))
	}
	return doc
}

// paths flattens a JSON value into the paths of all its fields, arrays'
// elements as "[]".
func paths(prefix []string, v any, out map[string][]string) {
	if len(prefix) > 0 {
		out[strings.Join(prefix, ".")] = prefix
	}
	switch v := v.(type) {
	case map[string]any:
		for k, el := range v {
			paths(append(slices.Clone(prefix), k), el, out)
		}
	case []any:
		for _, el := range v {
			paths(append(slices.Clone(prefix), "[]"), el, out)
		}
	}
}

func matches(doc, got []string) bool {
	if len(doc) != len(got) {
		return false
	}
	for i := range doc {
		if doc[i] != got[i] && !strings.HasPrefix(doc[i], "<") {
			return false
		}
	}
	return true
}

// checkFields compares the fields printed with those documented.
func checkFields(t *testing.T, doc jsonDoc, command string, got map[string][]string) {
	t.Helper()
	fields, ok := doc[command]
	if !ok {
		t.Errorf("JSON.md has no section for %q", command)
		return
	}
	present := func(p []string) bool {
		for _, g := range got {
			if matches(p, g) {
				return true
			}
		}
		return false
	}
	for key, g := range got {
		documented := false
		for _, f := range fields {
			n := len(f.path)
			if matches(f.path, g) ||
				(n < len(g) && matches(f.path, g[:n]) && f.opaque) ||
				(len(g) < n && matches(f.path[:len(g)], g)) {
				documented = true
				break
			}
		}
		if !documented {
			t.Errorf("%s --json prints %s, which JSON.md does not document", command, key)
		}
	}
	for _, f := range fields {
		if f.optional {
			continue
		}
		want := f.path
		if want[len(want)-1] == "[]" {
			// An array is documented by its elements; it must be there, maybe empty.
			want = want[:len(want)-1]
			if len(want) == 0 {
				continue
			}
		}
		// Inside an absent optional field or an empty array nothing is required.
		skip := false
		for i := 1; i < len(want); i++ {
			prefix := want[:i]
			optionalHere := prefix[i-1] == "[]"
			for _, o := range fields {
				if o.optional && slices.Equal(o.path, prefix) {
					optionalHere = true
				}
			}
			if optionalHere && !present(prefix) {
				skip = true
				break
			}
		}
		if !skip && !present(want) {
			t.Errorf("%s --json does not print %s, which JSON.md documents as always present", command, strings.Join(f.path, "."))
		}
	}
}

// decodeAll reads one JSON value, or a stream of them (JSON lines), and
// flattens their fields.
func decodeAll(t *testing.T, command, out string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(out))
	n := 0
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s --json printed something that is not JSON (%v):\n%s", command, err, out)
		}
		paths(nil, v, got)
		n++
	}
	if n == 0 {
		t.Fatalf("%s --json printed nothing", command)
	}
	return got
}

func TestEveryCommandTakesJSON(t *testing.T) {
	doc := readJSONDoc(t)
	noJSON := []string{"mcp", "completion"} // stdout is the protocol, or a shell script; see JSON.md
	for _, c := range cmd.Commands() {
		leaves := map[string][]string{}
		if len(c.Subcommands) == 0 {
			leaves[c.Name] = flagNames(c.Flags)
		}
		for _, s := range c.Subcommands {
			leaves[c.Name+" "+s.Name] = flagNames(s.Flags)
		}
		for name, flags := range leaves {
			if c.Hidden || slices.Contains(noJSON, name) {
				continue
			}
			if !slices.Contains(flags, "json") {
				t.Errorf("acolyte %s takes no --json", name)
			}
			if _, ok := doc[name]; !ok {
				t.Errorf("JSON.md has no section for acolyte %s", name)
			}
		}
	}
}

func flagNames(flags []cli.Flag) []string {
	var out []string
	for _, f := range flags {
		out = append(out, f.Names()...)
	}
	return out
}

// TestJSONOutputMatchesDoc runs every command with --json, in a real
// repository against a real database (and a model served by httptest for
// run and chat), and holds what each prints to cmd/JSON.md.
func TestJSONOutputMatchesDoc(t *testing.T) {
	doc := readJSONDoc(t)
	repo := t.TempDir()
	t.Setenv("ACOLYTE_HOME", t.TempDir())
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("ACOLYTE_EMBEDDER", "static")
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"} {
		t.Setenv(k, v)
	}
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = repo
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(repo, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("AGENTS.md", "# Rules\n- Run make test before pushing.\n")
	write("scripts/deploy.sh", "echo deploying\n")
	git("add", ".")
	git("commit", "-q", "-m", "init")

	exercised := map[string]bool{}
	run := func(section string, stdin string, wantCode int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		args = append([]string{"acolyte", "--repo", repo}, args...)
		code := cmd.Run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
		if code != wantCode {
			t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", args[3:], code, wantCode, out.String(), errOut.String())
		}
		checkFields(t, doc, section, decodeAll(t, section, out.String()))
		exercised[section] = true
		return out.String()
	}

	run("sync", "", 0, "sync", "--json")
	out := run("remember", "", 0, "remember", "--json", "--topic", "deploy", "Deploys run scripts/deploy.sh with the staging flag")
	run("remember", "", 0, "remember", "--json", "Deploys run scripts/deploy.sh with the staging flag") // existing
	var added struct{ Memory struct{ ID string } }
	json.Unmarshal([]byte(out), &added)
	run("remember", "", 0, "remember", "--json", "--scope", "user", "I prefer table-driven tests")
	out = run("remember", "", 0, "remember", "--json", "--scope", "user", "The old laptop runs the nightly backup")
	var userFact struct{ Memory struct{ ID string } }
	json.Unmarshal([]byte(out), &userFact)
	run("search", "", 0, "search", "--json", "how do deploys run")
	run("remember", "", 0, "remember", "--json", "--path", "scripts/**", "Deploy scripts take the target as their first argument")
	run("search", "", 0, "search", "--json", "--path", "scripts/deploy.sh", "what does a deploy script take")
	run("search", "", 1, "search", "--json", "--kind", "observation", "deploys") // nothing relevant: []
	run("list", "", 0, "list", "--json")
	run("status", "", 0, "status", "--json")
	run("reindex", "", 0, "reindex", "--json", "--all")
	write("team.json", `["Staging lives in eu-west-1", {"content": "Payments are owned by team Orca", "topic": "owners"}]`)
	run("seed", "", 0, "seed", "--json", filepath.Join(repo, "team.json"))
	os.Remove(filepath.Join(repo, "team.json"))
	git("add", ".")
	git("commit", "-q", "-m", "memories")
	run("check", "", 0, "check", "--json")
	write("AGENTS.md", "# Rules\n- Run make test before pushing.\n- Never push on Fridays.\n")
	run("check", "", 1, "check", "--json")
	run("sync", "", 0, "sync", "--json")
	run("stale", "", 0, "stale", "--json")
	write("scripts/deploy.sh", "echo changed\n")
	git("commit", "-q", "-am", "change deploy")
	run("stale", "", 1, "stale", "--json")
	if out := run("search", "", 0, "search", "--json", "how do deploys run"); !strings.Contains(out, `"stale"`) {
		t.Errorf("search --json after the cited file changed shows no stale result:\n%s", out)
	}
	run("init", "", 0, "init", "--json")
	run("hooks install", "", 0, "hooks", "install", "--json")
	run("hooks status", "", 0, "hooks", "status", "--json")
	run("hooks uninstall", "", 0, "hooks", "uninstall", "--json")
	run("hooks status", "", 1, "hooks", "status", "--json") // the same "no" as without --json
	run("prompt", "", 0, "prompt", "--json")
	run("prompt --stats", "", 0, "prompt", "--stats", "--json")
	run("edit", "", 0, "edit", "--json", userFact.Memory.ID, "The old laptop runs the weekly backup")
	run("forget", "", 0, "forget", "--json", userFact.Memory.ID)

	corpus, queries := filepath.Join(t.TempDir(), "corpus.jsonl"), filepath.Join(t.TempDir(), "queries.jsonl")
	os.WriteFile(corpus, []byte(`{"id":"d1","group":"g","content":"The cat sleeps on the red sofa"}
{"id":"d2","group":"g","content":"Trains to Lyon leave every hour"}
`), 0o644)
	os.WriteFile(queries, []byte(`{"id":"q1","group":"g","query":"where does the cat sleep","relevant":["d1"],"category":1}
`), 0o644)
	run("bench retrieval", "", 0, "bench", "retrieval", "--json", "--corpus", corpus, "--queries", queries, "--k", "1,5")

	t.Setenv("GEMINI_API_KEY", "test-key")
	srv, _ := geminiReplies(t,
		`{"functionCall":{"name":"memory_add","args":{"content":"Integration tests need Docker running."}}}`,
		`{"text":"Saved."}`,
		`{"functionCall":{"name":"memory_observe","args":{"facts":[{"content":"The user runs integration tests locally.","scope":"project"},{"content":"Integration tests need Docker running.","scope":"project"}]}}}`,
		`{"text":"Hello."}`,
		`{"functionCall":{"name":"memory_observe","args":{"facts":[{"content":"The user says hello before asking.","scope":"user"}]}}}`,
	)
	run("run", "", 0, "run", "--json", "--base-url", srv.URL, "remember that integration tests need Docker")
	run("chat", "hi\n/exit\n", 0, "chat", "--json", "--base-url", srv.URL)

	// ui serves until it is interrupted; what it prints first is its JSON.
	uiCtx, stopUI := context.WithCancel(context.Background())
	uiOut, uiIn := io.Pipe()
	uiCode := make(chan int, 1)
	go func() {
		code := cmd.Run(uiCtx, []string{"acolyte", "--repo", repo, "ui", "--json"}, strings.NewReader(""), uiIn, io.Discard)
		uiIn.Close()
		uiCode <- code
	}()
	var uiJSON json.RawMessage
	if err := json.NewDecoder(uiOut).Decode(&uiJSON); err != nil {
		t.Fatalf("ui --json: %v", err)
	}
	stopUI()
	io.Copy(io.Discard, uiOut)
	if code := <-uiCode; code != 0 {
		t.Fatalf("ui --json: exit %d after an interrupt, want 0", code)
	}
	checkFields(t, doc, "ui", decodeAll(t, "ui", string(uiJSON)))
	exercised["ui"] = true

	if pgtest.Available() {
		pg := pgtest.Start(t)
		run("team init", "", 0, "team", "init", "--json", "--team-db", pg.URL("postgres", "postgres"), "--team", "docs")
		pg.Admin(t, "postgres", "CREATE ROLE writer LOGIN")
		run("team grant", "", 0, "team", "grant", "--json", "--team-db", pg.URL("postgres", "postgres"), "--team", "docs", "writer")
		run("remember", "", 0, "remember", "--json", "--scope", "team", "--team-db", pg.URL("writer", "postgres"), "--team", "docs", "Staging is reached through bastion-2")
		run("team status", "", 0, "team", "status", "--json", "--team-db", pg.URL("writer", "postgres"))
		run("team revoke", "", 0, "team", "revoke", "--json", "--team-db", pg.URL("postgres", "postgres"), "--team", "docs", "writer")
	} else {
		t.Log("team commands not run: no PostgreSQL server here")
		for _, name := range []string{"team init", "team status", "team grant", "team revoke"} {
			exercised[name] = true
		}
	}

	for name := range doc {
		if !exercised[name] {
			t.Errorf("JSON.md documents %q, which this test never ran", name)
		}
	}
}
