package cmd

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// repairStore rebuilds the local database with sqlite.Repair and says what
// it kept.
func repairStore(c *cli.Context) (sqlite.Repaired, error) {
	dir, err := home(c)
	if err != nil {
		return sqlite.Repaired{}, err
	}
	e, err := chooseEmbedder(c)
	if err != nil {
		return sqlite.Repaired{}, err
	}
	r, err := sqlite.Repair(c.Context, filepath.Join(dir, "acolyte.db"), e)
	if err != nil {
		return r, fmt.Errorf("repair: %w", err)
	}
	if !c.Bool("json") {
		fmt.Fprintf(c.App.ErrWriter, "repaired: %s recovered; %s of the damaged file could not be read; it is kept as %s\n",
			plural(r.Recovered, "memory", "memories"), plural(r.Unreadable, "stretch", "stretches"), r.Backup)
	}
	return r, nil
}
