//go:build !linux

package cmd

import "os"

// isTerminal is false where the terminal's input cannot be flushed here
// yet: the chat then treats its input as piped (the next line answers a
// confirmation).
func isTerminal(*os.File) bool { return false }

func flushInput(*os.File) {}

func (in *chatInput) readTerminal() { panic("unreachable: isTerminal is false") }
