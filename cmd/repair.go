package cmd

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/memory"
	"github.com/acolyte-dev/acolyte/memory/sqlite"
)

// repairStore rebuilds the local database with sqlite.Repair and says what
// it kept. A database that is not damaged (no mark, and PRAGMA
// quick_check reads every page) is left as it is: ok is false, and no
// .bad copy is made (issue 36: a healthy database was called damaged and
// left .bad files behind).
func repairStore(c *cli.Context) (r sqlite.Repaired, ok bool, err error) {
	dir, err := home(c)
	if err != nil {
		return sqlite.Repaired{}, false, err
	}
	if healthy, err := notDamaged(c); err != nil {
		return sqlite.Repaired{}, false, err
	} else if healthy {
		if !c.Bool("json") {
			fmt.Fprintf(c.App.ErrWriter, "%s is not damaged (every page reads back as SQLite wrote it), so --repair left it as it is\n", filepath.Join(dir, "acolyte.db"))
		}
		return sqlite.Repaired{}, false, nil
	}
	e, err := chooseEmbedder(c)
	if err != nil {
		return sqlite.Repaired{}, false, err
	}
	r, err = sqlite.Repair(c.Context, filepath.Join(dir, "acolyte.db"), e)
	if err != nil {
		return r, false, fmt.Errorf("repair: %w", err)
	}
	if !c.Bool("json") {
		fmt.Fprintf(c.App.ErrWriter, "repaired: %s recovered; %s of the damaged file could not be read; it is kept as %s\n",
			plural(r.Recovered, "memory", "memories"), plural(r.Unreadable, "stretch", "stretches"), r.Backup)
	}
	return r, true, nil
}

// notDamaged says whether the local database opens, carries no damage
// mark and passes PRAGMA quick_check; a database that does not even open
// is for Repair to judge.
func notDamaged(c *cli.Context) (bool, error) {
	s, err := openStore(c)
	if err != nil {
		return false, nil
	}
	defer s.Close()
	if s.Damaged() != "" {
		return false, nil
	}
	if err := s.Verify(c.Context); err != nil {
		if errors.Is(err, memory.ErrCorrupt) {
			return false, nil
		}
		return false, fmt.Errorf("check the database before repairing it: %w", err)
	}
	return true, nil
}
