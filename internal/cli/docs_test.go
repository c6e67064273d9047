package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpi-dev/mcpi/internal/command"
)

// docs/cli.md names every command and every flag: a flag added without a
// word in the reference fails here.
func TestCLIReferenceComplete(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		// The list commands share one heading: mcpi tools | resources | ...
		if c.HasParent() && !strings.Contains(doc, c.CommandPath()) && !strings.Contains(doc, "| "+c.Name()+" ") {
			t.Errorf("docs/cli.md does not mention %q", c.CommandPath())
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			if !strings.Contains(doc, "--"+f.Name) {
				t.Errorf("docs/cli.md does not mention %s --%s", c.CommandPath(), f.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCmdRoot(&command.Factory{IO: &command.IOStreams{}}))
}
