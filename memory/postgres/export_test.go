package postgres

// SetTextSearchConfig makes s parse queries with cfg, for the test that
// compares configurations after re-generating the index column with it.
func SetTextSearchConfig(s *Store, cfg string) { s.tsConfig = cfg }

// Migration returns the SQL that takes the schema from version v-1 to v,
// for the test that migrates a database made by an older acolyte.
func Migration(v int) string { return migrations[v-1] }
