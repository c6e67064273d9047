package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command's argument mistakes are usage errors (exit 2, with the
// usage hint), never "could not connect": for each command of the tree,
// each number of positional words from 0 to 3 that its validator refuses
// is run, and so is a word that names no subcommand of a command that
// groups others.
func TestEveryArgumentMistakeIsAUsageError(t *testing.T) {
	ios, _, _, _ := Test()
	root := newCmdRoot(&Factory{IO: ios}, "")
	var cases [][]string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		path := strings.Fields(c.CommandPath())[1:]
		if c.HasSubCommands() {
			cases = append(cases, append(append([]string{}, path...), "nosuchword"))
			for _, sub := range c.Commands() {
				walk(sub)
			}
			return
		}
		if c.Args == nil {
			return
		}
		for n := 0; n <= 3; n++ {
			args := []string{"w1", "w2", "w3"}[:n]
			if c.Args(c, args) != nil {
				cases = append(cases, append(append([]string{}, path...), args...))
			}
		}
	}
	walk(root)
	if len(cases) < 20 {
		t.Fatalf("only %d cases found: the walk is broken", len(cases))
	}
	for _, args := range cases {
		code, out, errOut := runCLI(t, "", args...)
		if code != ExitUsage || !strings.Contains(errOut, "--help' for usage") {
			t.Errorf("mcpi %s: exit %d, stderr %q; want exit 2 and the usage hint", strings.Join(args, " "), code, errOut)
		}
		if out != "" {
			t.Errorf("mcpi %s printed on stdout: %q", strings.Join(args, " "), out)
		}
	}
}
