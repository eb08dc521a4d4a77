//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package odb

// canMap is whether packs are mapped: where mapfile maps rather than reads
// a whole file, which a pack of gigabytes must not be.
const canMap = true
