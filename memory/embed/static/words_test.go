package static

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"runTool", []string{"run", "tool"}},
		{"memory_embeddings", []string{"memory", "embeddings"}},
		{"cmd/root.go", []string{"cmd", "root", "go"}},
		{"HTTPServer", []string{"http", "server"}},
		{"getHTTP2Client", []string{"get", "http2", "client"}},
		{"parseJSON", []string{"parse", "json"}},
		{"Tool execution layers: runTool() dispatches each call.", []string{"tool", "execution", "layers", "run", "tool", "dispatches", "each", "call"}},
		{"utf8 sha256 v2", []string{"utf8", "sha256", "v2"}},
		{"costs 3.5 dollars in 2023.", []string{"costs", "3.5", "dollars", "in", "2023"}},
		{"version 1.2.3", []string{"version", "1.2.3"}},
		{"I'm sure it's Caroline's", []string{"i", "sure", "it", "caroline"}},
		{"don't, can't, won't, isn't", []string{"do", "not", "can", "not", "will", "not", "is", "not"}},
		{"Über Café", []string{"über", "café"}},
		{"  --- ", nil},
		{"", nil},
		{"x", []string{"x"}},
		{"ABC", []string{"abc"}},
		{"'quoted' text", []string{"quoted", "text"}},
	}
	for _, c := range cases {
		if got := Words(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Words(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
