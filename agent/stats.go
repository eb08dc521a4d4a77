package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

// InstructionFiles are the agent instruction files other agents inject
// whole, which the "inject everything" baseline counts.
var InstructionFiles = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md"}

// CounterEstimate names the offline count, memory.EstimateTokens.
const CounterEstimate = "estimate (1 token per 4 bytes)"

// PromptTokens are the token counts of the parts of the first request.
type PromptTokens struct {
	Soul         int `json:"soul"`
	Instructions int `json:"instructions"`
	// ToolsDeferred is the initial declarations: memory tools, the core
	// workspace tools and load_tools.
	ToolsDeferred int `json:"tools_deferred"`
	// ToolsFull is every tool declared up front, without load_tools.
	ToolsFull int `json:"tools_full"`
	// Initial is the system prompt plus the initial declarations: what
	// acolyte really sends before the task.
	Initial int `json:"initial"`
	// Full is the system prompt plus every tool declared up front.
	Full int `json:"full"`
	// Baseline is what injecting everything would add: the instruction files
	// and every project memory.
	Baseline int `json:"baseline"`
}

// PromptReport is the exact system prompt and initial tool declarations,
// with their token counts.
type PromptReport struct {
	System           string       `json:"system"`
	Tools            []ToolDecl   `json:"tools"`
	Counter          string       `json:"counter"`
	Tokens           PromptTokens `json:"tokens"`
	BaselineFiles    []string     `json:"baseline_files"`
	BaselineMemories int          `json:"baseline_memories"`
}

// Prompt reports what a session over tk and ws sends first. Tokens are
// counted by counter when it is not nil (the provider's own tokenizer), else
// estimated with memory.EstimateTokens. Tool declarations are counted as
// their JSON text, which is how they reach the model.
func Prompt(ctx context.Context, tk memory.Toolkit, ws *toolbox.Sandbox, counter TokenCounter) (PromptReport, error) {
	core, deferred := DefaultTools(tk, ws)
	ts, err := NewToolset(core, deferred)
	if err != nil {
		return PromptReport{}, err
	}
	rep := PromptReport{System: SystemPrompt(), Tools: ts.Declarations(), Counter: CounterEstimate}
	count := func(s string) (int, error) { return memory.EstimateTokens(s), nil }
	if counter != nil {
		rep.Counter = "provider CountTokens"
		count = func(s string) (int, error) {
			if s == "" {
				return 0, nil
			}
			return counter.CountTokens(ctx, s)
		}
	}

	baseline, files, n, err := injectEverything(ctx, tk, ws)
	if err != nil {
		return rep, err
	}
	rep.BaselineFiles, rep.BaselineMemories = files, n

	texts := []struct {
		dst  *int
		text string
	}{
		{&rep.Tokens.Soul, Soul},
		{&rep.Tokens.Instructions, Instructions},
		{&rep.Tokens.ToolsDeferred, declJSON(ts.Declarations())},
		{&rep.Tokens.ToolsFull, declJSON(ts.AllDeclarations())},
		{&rep.Tokens.Initial, rep.System + "\n" + declJSON(ts.Declarations())},
		{&rep.Tokens.Full, rep.System + "\n" + declJSON(ts.AllDeclarations())},
		{&rep.Tokens.Baseline, baseline},
	}
	for _, t := range texts {
		if *t.dst, err = count(t.text); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func declJSON(decls []ToolDecl) string {
	b, _ := json.Marshal(decls) // RawMessage schemas are valid JSON by construction
	return string(b)
}

// injectEverything gathers what an agent that injects its memory would put
// in every prompt: each instruction file in the workspace and every project
// memory. Rule memories are left out because they are split from those
// same files.
func injectEverything(ctx context.Context, tk memory.Toolkit, ws *toolbox.Sandbox) (text string, files []string, memories int, err error) {
	var b strings.Builder
	files = []string{}
	if ws != nil {
		err = filepath.WalkDir(ws.Root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			for _, name := range InstructionFiles {
				if !d.IsDir() && d.Name() == name {
					data, rerr := os.ReadFile(p)
					if rerr != nil {
						return rerr
					}
					rel, _ := filepath.Rel(ws.Root, p)
					files = append(files, filepath.ToSlash(rel))
					b.Write(data)
					b.WriteString("\n")
				}
			}
			return ctx.Err()
		})
		if err != nil {
			return "", nil, 0, err
		}
	}
	mems, err := tk.List(ctx, memory.Filter{Scope: memory.ScopeProject})
	if err != nil && !errors.Is(err, memory.ErrNoScopeKey) {
		return "", nil, 0, err
	}
	for _, m := range mems {
		if m.Kind == memory.KindRule {
			continue
		}
		b.WriteString("- " + m.Content + "\n")
		memories++
	}
	return b.String(), files, memories, nil
}
