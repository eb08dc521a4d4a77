package postgres

// SetTextSearchConfig makes s parse queries with cfg, for the test that
// compares configurations after re-generating the index column with it.
func SetTextSearchConfig(s *Store, cfg string) { s.tsConfig = cfg }
