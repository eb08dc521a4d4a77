package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/memory"
)

func editCommand() *cli.Command {
	return &cli.Command{
		Name:      "edit",
		Usage:     "replace the text of a stored memory, keeping its id (or an unambiguous start of it)",
		ArgsUsage: "ID TEXT...",
		Description: "The memory's updated time moves, so that when branches that hold the old and the new\n" +
			"text merge, the edit wins. Rules and seeds are edited in the files they come from.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "topic", Usage: "a new topic (default: keep the current one)"},
			allowSecretFlag,
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usage(errors.New("edit needs an id and the new text; `acolyte list` or `acolyte search` shows ids"))
			}
			words := c.Args().Tail()
			text := strings.Join(words, " ")
			if len(words) == 0 || text == "-" {
				var err error
				if text, err = readStdin(c, "new text", `acolyte edit ID "TEXT"`); err != nil {
					return err
				}
			}
			w, err := openWorkspace(c)
			if err != nil {
				return err
			}
			defer w.Close()
			ids, err := resolveIDs(c.Context, w, []string{c.Args().First()})
			if err != nil {
				return err
			}
			m, err := w.Toolkit.Edit(c.Context, ids[0], memory.Revision{Content: text, Topic: c.String("topic"), AllowSecret: c.Bool(allowSecretFlag.Name)})
			if err != nil {
				return err // exitCode tells a refusal (1) from a broken store (2)
			}
			if c.Bool("json") {
				return printJSON(c, struct {
					Memory memory.Memory `json:"memory"`
				}{m})
			}
			fmt.Fprintln(c.App.Writer, m.ID)
			return nil
		},
	}
}
