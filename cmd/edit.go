package cmd

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/acolyte-dev/acolyte/memory"
)

func editCommand() *cli.Command {
	return &cli.Command{
		Name:      "edit",
		Usage:     "replace the text of a stored memory, keeping its id",
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
			id := c.Args().First()
			words := c.Args().Tail()
			// Flag parsing stops at the id, so a "--" typed to mark the
			// text as no flags arrives here as a word of it.
			if len(words) > 0 && words[0] == "--" {
				words = words[1:]
			}
			text := strings.Join(words, " ")
			if len(words) == 0 || text == "-" {
				b, err := io.ReadAll(io.LimitReader(c.App.Reader, memory.MaxContentBytes+1))
				if err != nil {
					return usage(fmt.Errorf("read the new text from stdin: %w", err))
				}
				text = string(b)
			}
			w, err := openWorkspace(c)
			if err != nil {
				return err
			}
			defer w.Close()
			m, err := w.Toolkit.Edit(c.Context, id, memory.Revision{Content: text, Topic: c.String("topic"), AllowSecret: c.Bool(allowSecretFlag.Name)})
			if err != nil {
				return fail(err)
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
