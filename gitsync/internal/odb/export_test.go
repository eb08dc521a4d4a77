package odb

// OpenReading is Open reading the packs through their files, as where
// they cannot be mapped (canMap), so that road is tested everywhere.
func OpenReading(commonDir string) (*DB, error) { return open(commonDir, false) }
