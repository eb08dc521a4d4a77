//go:build !linux

package beneath

import "os"

// fastDir is nothing here: os.Root answers every name.
type fastDir struct{}

func openFast(string) (fastDir, error) { return fastDir{}, nil }

func (fastDir) close() error { return nil }

func (fastDir) open(string, bool) (*os.File, error) { return nil, errFallBack }
