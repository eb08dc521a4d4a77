package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acolyte-dev/acolyte/memory"
)

// Status is the content of the acolyte://status resource.
type Status struct {
	Root     string `json:"root,omitempty"`
	Embedder string `json:"embedder,omitempty"`
	Total    int    `json:"total"`
	// Counts is memories by scope, then by kind; only non-zero counts appear.
	Counts map[memory.Scope]map[memory.Kind]int `json:"counts"`
}

// countMemories summarises the memories visible through tk. It lists them,
// which is a single indexed scan; the status resource is read rarely, so
// that is cheaper than teaching every Toolkit to count.
func countMemories(ctx context.Context, tk memory.Toolkit) (total int, counts map[memory.Scope]map[memory.Kind]int, err error) {
	mems, err := tk.List(ctx, memory.Filter{})
	if err != nil {
		return 0, nil, err
	}
	counts = make(map[memory.Scope]map[memory.Kind]int)
	for _, m := range mems {
		if counts[m.Scope] == nil {
			counts[m.Scope] = make(map[memory.Kind]int)
		}
		counts[m.Scope][m.Kind]++
	}
	return len(mems), counts, nil
}

func (s *session) statusHandler() sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		g := s.host.gate
		if err := g.enter(ctx); err != nil {
			return nil, err
		}
		defer g.leave()
		bound := s.binding()
		root, embedder := bound.Root, s.host.opts.Embedder
		total, counts, err := countMemories(ctx, bound.Toolkit)
		if err != nil {
			return nil, fmt.Errorf("counting memories: %w", err)
		}
		b, err := json.Marshal(Status{Root: root, Embedder: embedder, Total: total, Counts: counts})
		if err != nil {
			return nil, fmt.Errorf("encoding status: %w", err)
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{
			URI: StatusURI, MIMEType: "application/json", Text: string(b),
		}}}, nil
	}
}
