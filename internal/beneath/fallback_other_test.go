//go:build !linux

package beneath

func forceFallBack(*Dir) {}
