//go:build !unix

package sqlite

// canWrite finds no read-only home where access(2) is not: there, SQLite's
// own error says what failed.
func canWrite(string) error { return nil }
