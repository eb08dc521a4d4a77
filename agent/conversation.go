package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

// Conversation is a session's history as saved for resuming it. It is
// kept in the user's acolyte home, readable by the user only: it holds what
// the tools read, as a shell's history does.
type Conversation struct {
	Version int       `json:"version"`
	Session string    `json:"session"`
	Saved   time.Time `json:"saved"`
	History []Message `json:"history"`
}

const conversationVersion = 1

// ErrNoConversation is a session with no saved conversation.
var ErrNoConversation = errors.New("no saved conversation")

// sessionIDPattern is what a session id may be to name a file: no path
// separators, no leading dot. Compiled on first use: the bounded
// repetition compiles to 128 states, which cost every acolyte process,
// hooks included, a tenth of a millisecond at start-up.
var sessionIDPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$`)
})

func conversationPath(dir, id string) (string, error) {
	if !sessionIDPattern().MatchString(id) {
		return "", fmt.Errorf("session id %q cannot name a saved conversation: use letters, digits, '.', '_' and '-' only", id)
	}
	return filepath.Join(dir, id+".json"), nil
}

// SaveConversation writes the history of session id into dir, replacing
// what was saved before in one rename, so a crash leaves the old one whole.
func SaveConversation(dir, id string, history []Message, now time.Time) error {
	p, err := conversationPath(dir, id)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save the conversation: %w", err)
	}
	b, err := json.Marshal(Conversation{Version: conversationVersion, Session: id, Saved: now.UTC(), History: history})
	if err != nil {
		return fmt.Errorf("save the conversation: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+id+"-*.tmp")
	if err != nil {
		return fmt.Errorf("save the conversation: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("save the conversation: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save the conversation: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("save the conversation: %w", err)
	}
	return nil
}

// LoadConversation reads the saved conversation of session id from dir.
func LoadConversation(dir, id string) (Conversation, error) {
	p, err := conversationPath(dir, id)
	if err != nil {
		return Conversation{}, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Conversation{}, fmt.Errorf("%w for session %s in %s", ErrNoConversation, id, dir)
	}
	if err != nil {
		return Conversation{}, err
	}
	var c Conversation
	if err := json.Unmarshal(b, &c); err != nil || c.Version != conversationVersion {
		return Conversation{}, fmt.Errorf("the saved conversation %s is damaged or from another version of acolyte; start a new session", p)
	}
	return c, nil
}

// LastConversation names the session saved most recently in dir.
func LastConversation(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var last string
	var when time.Time
	for _, e := range entries {
		name := e.Name()
		id := name[:len(name)-len(filepath.Ext(name))]
		if filepath.Ext(name) != ".json" || !sessionIDPattern().MatchString(id) {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().After(when) {
			last, when = id, info.ModTime()
		}
	}
	if last == "" {
		return "", fmt.Errorf("%w in %s to resume; start one with acolyte chat or acolyte run", ErrNoConversation, dir)
	}
	return last, nil
}

// Resume continues a saved conversation: the next turn sees its history,
// compacted to the budget by the same rules as any other (see fitBudget),
// and distill afterwards reads only what is new.
func (s *Session) Resume(history []Message) {
	s.history = append([]Message(nil), history...)
	s.resumed = len(s.history)
}

// RemoveConversation forgets the saved conversation of session id, if any.
func RemoveConversation(dir, id string) error {
	p, err := conversationPath(dir, id)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
