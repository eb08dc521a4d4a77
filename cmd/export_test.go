package cmd

// Commands is the CLI surface, for the tests of package cmd_test.
var Commands = commands
