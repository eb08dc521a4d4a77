// Package mapfile maps a file read-only into memory, for the files acolyte
// replaces by rename and never truncates or rewrites in place: the search
// catalog and the shadow of the imported memories file. (Writing past the
// end, as the catalog's and the shadow's appends do, leaves the mapped
// bytes as they were.) Mapping instead of reading saves a
// large file's copy, and the zeroing and page faults of a fresh buffer of
// its size; a renamed-over file keeps its old pages for the mapping's
// reader.
//
// A file something else may write in place, truncating it under the
// mapping, must be read instead: touching a page past the new end raises
// SIGBUS, which the Go runtime does not turn into an error.
package mapfile
