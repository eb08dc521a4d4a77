package beneath

// forceFallBack makes d answer as on a kernel without openat2.
func forceFallBack(d *Dir) { d.fast.missing.Store(true) }
