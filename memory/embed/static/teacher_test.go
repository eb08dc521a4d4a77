package static

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/acolyte-dev/acolyte/memory/embed/internal/wordpiece"
	"github.com/acolyte-dev/acolyte/memory/embed/static/internal/wordvec"
)

// teacherCase is one line of testdata/teacher_tokens.jsonl: a text and the
// tokens the teacher's own tokeniser (Hugging Face tokenizers, with the
// tokenizer.json the table was distilled with) split it into, [UNK]
// dropped.
type teacherCase struct {
	Text   string   `json:"text"`
	Tokens []string `json:"tokens"`
}

func teacherCases(t *testing.T) []teacherCase {
	t.Helper()
	f, err := os.Open("../internal/wordpiece/testdata/teacher_tokens.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []teacherCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c teacherCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("only %d cases", len(cases))
	}
	return cases
}

// TestTokensMatchTheTeacher splits text with the vocabulary of the
// committed table, which holds every token of the teacher's but the
// special ones, and must get exactly the teacher's pieces.
func TestTokensMatchTheTeacher(t *testing.T) {
	data, err := os.ReadFile("tokvec.bin")
	if err != nil {
		t.Fatal(err)
	}
	table, err := wordvec.Open(string(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range teacherCases(t) {
		ids := wordpiece.Tokenize(table, c.Text)
		got := make([]string, len(ids))
		for i, id := range ids {
			got[i] = table.Word(id)
		}
		if strings.Join(got, " ") != strings.Join(c.Tokens, " ") {
			t.Errorf("Tokenize(%.60q)\n got %q\nwant %q", c.Text, got, c.Tokens)
		}
	}
}
