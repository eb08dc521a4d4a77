// Package flock takes the kernel's advisory lock on an open file without
// waiting: a lock dies with the process that held it, so a killed holder
// leaves none behind.
package flock
