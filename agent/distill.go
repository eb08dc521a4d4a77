package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/acolyte-dev/acolyte/agent/toolbox"
	"github.com/acolyte-dev/acolyte/memory"
)

// SourceDistill marks memories written by the distill step.
const SourceDistill = "distill"

// NearDuplicateSimilarity is the rule for skipping a distilled fact: it is
// a near-duplicate of a stored memory when one of the closest search hits in
// the same scope shares at least this fraction of distinct words with it
// (Jaccard similarity of the Normalize-d word sets). Exact duplicates are
// caught earlier by the toolkit itself. 0.8 tolerates a changed article or
// word order but not a changed command, path or number in a short fact.
const NearDuplicateSimilarity = 0.8

// nearDuplicateCandidates is how many search hits a fact is compared with:
// the best fused score is not always the closest wording.
const nearDuplicateCandidates = 3

// maxTranscriptChars keeps the observer call cheap on long sessions.
const maxTranscriptChars = 48 << 10

const distillPrompt = `You read a finished session between a user and a coding agent and keep what is worth remembering for future tasks. Call memory_observe exactly once.
A fact is one self-contained sentence that stays true and useful later: a project convention, a command that works, where something lives, a decision and its reason, a user preference. Name files, commands and values exactly.
scope: project for facts about this repository, user for the user's preferences in any project, session for what matters only in this session.
Do not record: the task itself, results of memory_search (they are already stored), secrets, guesses, temporary state. If nothing qualifies, call memory_observe with no facts.`

// observeSchema is built on first use: marshalling the scopes at package
// init cost every acolyte process, not only the one that distills.
var observeSchema = sync.OnceValue(func() string {
	return `{
  "type": "object",
  "properties": {
    "facts": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "content": {"type": "string", "description": "One self-contained fact."},
          "scope": {"type": "string", "enum": ` + scopeEnum() + `},
          "topic": {"type": "string", "description": "Short topic, e.g. testing, build, style."}
        },
        "required": ["content", "scope"]
      }
    }
  },
  "required": ["facts"]
}`
})

// Fact is one fact the observer proposed.
type Fact struct {
	Content string `json:"content"`
	Scope   string `json:"scope"`
	Topic   string `json:"topic,omitempty"`
}

// SkippedFact is a proposed fact that was not stored, and why.
type SkippedFact struct {
	Fact
	Reason      string `json:"reason"`
	DuplicateOf string `json:"duplicate_of,omitempty"`
}

// DistillReport says what the distill step did.
type DistillReport struct {
	Added   []memory.Memory `json:"added"`
	Skipped []SkippedFact   `json:"skipped,omitempty"`
	Usage   Usage           `json:"usage"`
}

// Distill asks the model, as an observer, for the durable facts in this
// session and stores each as an observation. A fact the store refuses is
// reported in the report and the others are still stored. An error means
// distill could not run at all (the model failed); it is emitted as a
// warning, because it never says anything about the task itself.
//
// It is bounded like any model request, by Config.RequestTimeout, and says
// it starts with an EventDistilling, so a slow observer is never a silent
// hang after the answer.
func (s *Session) Distill(ctx context.Context) (DistillReport, error) {
	s.emit(Event{Type: EventDistilling})
	dctx := ctx
	if s.cfg.RequestTimeout > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, s.cfg.RequestTimeout)
		defer cancel()
	}
	rep, err := Distill(dctx, s.cfg.Model, s.cfg.Toolkit, s.history[min(s.resumed, len(s.history)):])
	if err != nil && ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("distill: no answer from %s within %s, so nothing was stored; raise --timeout if the model is just slow", s.cfg.Model.Name(), s.cfg.RequestTimeout)
	} else if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("distill stopped, so nothing more was stored: %w", ctx.Err())
	}
	s.usage.Add(rep.Usage)
	if err != nil {
		s.emit(Event{Type: EventWarning, Error: err.Error(), Distill: &rep})
		return rep, err
	}
	s.emit(Event{Type: EventDistill, Distill: &rep})
	return rep, nil
}

// Distill turns a conversation into observation memories in tk.
func Distill(ctx context.Context, m Model, tk memory.Toolkit, history []Message) (DistillReport, error) {
	rep := DistillReport{Added: []memory.Memory{}}
	transcript := Transcript(history, maxTranscriptChars)
	if transcript == "" {
		return rep, nil
	}
	resp, err := m.Generate(ctx, Request{
		System:   distillPrompt,
		Messages: []Message{{Role: RoleUser, Parts: []Part{{Text: transcript}}}},
		Tools:    []ToolDecl{{Name: "memory_observe", Description: "Record the facts worth remembering.", Schema: json.RawMessage(observeSchema())}},
		// Forced, so a reply in prose cannot silently store nothing.
		ForceTool: "memory_observe",
	})
	if err != nil {
		return rep, fmt.Errorf("distill: %w", err)
	}
	rep.Usage = resp.Usage
	var (
		facts    []Fact
		observed bool
	)
	for _, c := range resp.Message.Calls() {
		if c.Name != "memory_observe" {
			continue
		}
		if c.Malformed != "" {
			return rep, fmt.Errorf("distill: the observer's memory_observe call was malformed: %s", c.Malformed)
		}
		var a struct {
			Facts []json.RawMessage `json:"facts"`
		}
		if err := json.Unmarshal(c.Args, &a); err != nil {
			return rep, fmt.Errorf("distill: the observer's facts are not a list of objects: %s", plainJSONError(err))
		}
		observed = true
		for _, raw := range a.Facts {
			var f Fact
			if err := json.Unmarshal(raw, &f); err != nil {
				// One malformed fact must not cost the others.
				rep.Skipped = append(rep.Skipped, SkippedFact{Reason: "malformed fact: " + plainJSONError(err)})
				continue
			}
			facts = append(facts, f)
		}
	}
	if !observed {
		return rep, fmt.Errorf("distill: the model answered without calling memory_observe, so nothing was stored (stop reason %q)", resp.Stop)
	}
	seen := map[string]bool{}
	for _, f := range facts {
		f.Content, f.Topic = strings.TrimSpace(f.Content), strings.TrimSpace(f.Topic)
		scope, err := memory.ParseScope(f.Scope)
		if err == nil && !distillable(scope) {
			err = fmt.Errorf("distill never writes %s memories: they are shared with everyone on the team, so only a person adds them", scope)
		}
		if err != nil {
			rep.Skipped = append(rep.Skipped, withholdSecret(tk, SkippedFact{Fact: f, Reason: err.Error()}))
			continue
		}
		if err := memory.ValidateContent(f.Content); err != nil {
			rep.Skipped = append(rep.Skipped, withholdSecret(tk, SkippedFact{Fact: f, Reason: err.Error()}))
			continue
		}
		key := string(scope) + "\x00" + memory.Normalize(f.Content)
		if seen[key] {
			rep.Skipped = append(rep.Skipped, withholdSecret(tk, SkippedFact{Fact: f, Reason: "repeated in this distill"}))
			continue
		}
		seen[key] = true
		if ctx.Err() != nil {
			return rep, fmt.Errorf("distill: %w", ctx.Err())
		}
		dup, err := nearDuplicate(ctx, tk, scope, f.Content)
		if err != nil {
			rep.Skipped = append(rep.Skipped, withholdSecret(tk, SkippedFact{Fact: f, Reason: "could not check for duplicates: " + err.Error()}))
			continue
		}
		if dup != nil {
			rep.Skipped = append(rep.Skipped, withholdSecret(tk, SkippedFact{Fact: f, Reason: "near-duplicate", DuplicateOf: dup.ID}))
			continue
		}
		added, err := tk.Add(ctx, memory.Draft{Content: f.Content, Scope: scope, Kind: memory.KindObservation, Topic: f.Topic, Source: SourceDistill})
		if err != nil {
			// A refused fact (a secret, a session fact with no session)
			// or a failed write costs this fact only; the others are
			// still stored. A secret is not echoed into the report.
			sk := SkippedFact{Fact: f, Reason: err.Error()}
			if errors.Is(err, memory.ErrSecret) {
				sk.Content, sk.Topic = withheld, ""
			}
			rep.Skipped = append(rep.Skipped, withholdSecret(tk, sk))
			continue
		}
		if added.Existing {
			rep.Skipped = append(rep.Skipped, withholdSecret(tk, SkippedFact{Fact: f, Reason: "already stored", DuplicateOf: added.Memory.ID}))
			continue
		}
		rep.Added = append(rep.Added, added.Memory)
	}
	return rep, nil
}

// nearDuplicate returns the stored memory that content nearly repeats, by
// the NearDuplicateSimilarity rule, or nil.
func nearDuplicate(ctx context.Context, tk memory.Toolkit, scope memory.Scope, content string) (*memory.Memory, error) {
	hits, err := tk.Search(ctx, memory.Query{Text: content, Filter: memory.Filter{Scope: scope, Limit: nearDuplicateCandidates}})
	if err != nil {
		return nil, err
	}
	for _, h := range hits {
		if WordSimilarity(h.Content, content) >= NearDuplicateSimilarity {
			m := h.Memory
			return &m, nil
		}
	}
	return nil, nil
}

// WordSimilarity is the Jaccard similarity of the distinct words of a and b
// after memory.Normalize: 1 for the same words in any order, 0 for none shared.
func WordSimilarity(a, b string) float64 {
	wa, wb := wordSet(a), wordSet(b)
	if len(wa) == 0 && len(wb) == 0 {
		return 1
	}
	shared := 0
	for w := range wa {
		if wb[w] {
			shared++
		}
	}
	return float64(shared) / float64(len(wa)+len(wb)-shared)
}

func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(memory.Normalize(s)) {
		set[strings.Trim(w, ".,;:!?\"'()")] = true
	}
	return set
}

// Transcript renders a conversation for the observer: every message's text
// and each tool call with a clipped result. When it is longer than max, the
// first message (the task) is kept and the oldest steps after it are dropped.
func Transcript(history []Message, max int) string {
	var blocks []string
	for _, m := range history {
		for _, p := range m.Parts {
			switch {
			case p.Text != "":
				blocks = append(blocks, fmt.Sprintf("[%s] %s", m.Role, p.Text))
			case p.Call != nil:
				blocks = append(blocks, fmt.Sprintf("[tool call] %s %s", p.Call.Name, clipText(string(p.Call.Args), 400)))
			case p.Result != nil:
				blocks = append(blocks, fmt.Sprintf("[tool result] %s %s", p.Result.Name, clipText(string(p.Result.Response), 600)))
			}
		}
	}
	if len(blocks) == 0 {
		return ""
	}
	total := 0
	for _, b := range blocks {
		total += len(b) + 1
	}
	first, rest := blocks[0], blocks[1:]
	for total > max && len(rest) > 0 {
		total -= len(rest[0]) + 1
		rest = rest[1:]
	}
	return strings.Join(append([]string{first}, rest...), "\n")
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s[:n])
	return string(r[:len(r)-1]) + "…"
}

// scopeEnum lists the scopes distill may write as a JSON array, so the
// observer's schema follows the one definition of scopes.
func scopeEnum() string {
	b, _ := json.Marshal(slices.DeleteFunc(slices.Clone(memory.Scopes), func(sc memory.Scope) bool { return !distillable(sc) })) // strings always marshal
	return string(b)
}

// distillable says whether distill may write a scope: never team, whose
// memories every member's agent reads at once.
func distillable(sc memory.Scope) bool { return sc != memory.ScopeTeam }

// withheld replaces the content of a fact refused as a secret in reports.
const withheld = "(withheld: looks like a secret)"

// withholdSecret keeps a skipped fact's text out of the report when the
// toolkit's guard would refuse it, whatever skipped it: a fact of an
// unknown scope, of the team scope or a near-duplicate is never stored,
// so no store refused it, and its text would reach the report, the
// event stream and the terminal. Without a guard to ask, the text is
// withheld too.
func withholdSecret(tk memory.Toolkit, sk SkippedFact) SkippedFact {
	if sk.Content == withheld || sk.Content == "" && sk.Topic == "" {
		return sk
	}
	g, ok := tk.(memory.Guarded)
	if !ok {
		sk.Content, sk.Topic = withheld, ""
		return sk
	}
	// Scope user: the guard of the local store, which every scope's shares.
	// The proposed scope is text from the model too, and an unknown one is
	// quoted in the reason, so it is checked as well.
	err := g.RefuseSecret(memory.Memory{Scope: memory.ScopeUser, Content: sk.Content, Topic: sk.Topic, Source: sk.Scope})
	if !errors.Is(err, memory.ErrSecret) {
		return sk
	}
	sk.Content, sk.Topic = withheld, ""
	if _, perr := memory.ParseScope(sk.Scope); perr != nil {
		sk.Scope, sk.Reason = "", "unknown scope (withheld)"
	}
	return sk
}

// plainJSONError says what was wrong with JSON without Go's type names.
func plainJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the value"
		}
		return fmt.Sprintf("%s is a JSON %s where %s was expected", field, te.Value, toolbox.Kind(te.Type))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
