package cli

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpi-dev/mcpi/internal/cmdutil"
	"github.com/mcpi-dev/mcpi/internal/command"
)

// walkCommands calls fn for every command of the whole tree, hidden ones
// included.
func walkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, fn)
	}
}

// Every flag of every command is in a group of flagGroups: the next flag
// defined without one fails here.
func TestEveryFlagInAGroup(t *testing.T) {
	ios, _, _, _ := command.Test()
	root := newCmdRoot(&command.Factory{IO: ios}, "")
	known := map[string]bool{}
	for _, g := range cmdutil.FlagGroups {
		known[g.ID] = true
	}
	n := 0
	walkCommands(root, func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		cmdutil.ApplyFlagGroups(c)
		c.Flags().VisitAll(func(f *pflag.Flag) {
			n++
			if g := cmdutil.FlagGroupOf(f); !known[g] {
				t.Errorf("%s --%s is in no group of flags (%q): define it between flagGroup(cmd, group) and the end it returns", c.CommandPath(), f.Name, g)
			}
		})
	})
	if n < 200 {
		t.Fatalf("only %d flags found: the walk is broken", n)
	}
}

// Every command's help lists its flags under their groups' titles, never
// under cobra's one "Flags:" list.
func TestHelpGroupsFlags(t *testing.T) {
	ios, _, _, _ := command.Test()
	root := newCmdRoot(&command.Factory{IO: ios}, "")
	title := map[string]string{}
	for _, g := range cmdutil.FlagGroups {
		title[g.ID] = g.Title
	}
	flagLine := regexp.MustCompile(`^  (?:-\S, |    )--([a-z0-9-]+)`)
	var paths [][]string
	walkCommands(root, func(c *cobra.Command) {
		if c.Name() != "help" {
			paths = append(paths, strings.Fields(c.CommandPath())[1:])
		}
	})
	for _, path := range paths {
		code, out, errOut := runCLI(t, "", append(slices.Clone(path), "--help")...)
		if code != command.ExitOK {
			t.Errorf("mcpi %s --help: exit %d, stderr %q", strings.Join(path, " "), code, errOut)
			continue
		}
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		cmdutil.ApplyFlagGroups(c)
		if strings.Contains(out, "\nFlags:\n") {
			t.Errorf("mcpi %s --help has flags in no group:\n%s", strings.Join(path, " "), out)
		}
		section := ""
		seen := map[string]string{}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " ") {
				section = strings.TrimSuffix(line, ":")
				continue
			}
			if m := flagLine.FindStringSubmatch(line); m != nil {
				seen[m[1]] = section
			}
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			want := title[cmdutil.FlagGroupOf(f)]
			if got, ok := seen[f.Name]; !ok || got != want {
				t.Errorf("mcpi %s --help: --%s is under %q, want %q:\n%s", strings.Join(path, " "), f.Name, got, want, out)
			}
		})
	}
}

// A call's help: its own flags first, OAuth's last.
func TestCallHelpOrder(t *testing.T) {
	out, _ := runCLIExit(t, command.ExitOK, "call", "--help")
	var order []int
	for _, s := range []string{"Arguments and answers:\n", "      --args string", "Output:\n", "      --json", "Live session:\n", "Connection:\n", "      --url string", "Authorization (HTTP servers):\n", "      --grant string", "Help:\n", "  -h, --help"} {
		i := strings.Index(out, s)
		if i < 0 {
			t.Fatalf("no %q in\n%s", s, out)
		}
		order = append(order, i)
	}
	if !slices.IsSorted(order) {
		t.Errorf("the groups are out of order:\n%s", out)
	}
	// The columns line up across the groups.
	col := -1
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "  ") || strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(strings.TrimLeft(line, " "), "-") {
			continue
		}
		if c := usageColumn(line); c > 0 {
			if col < 0 {
				col = c
			} else if c != col {
				t.Errorf("usage starts at column %d, not %d: %q", c, col, line)
			}
		}
	}
}

// usageColumn is where a flag line's usage starts: after the run of two
// spaces or more that follows the flag's name and type.
func usageColumn(line string) int {
	trimmed := strings.TrimLeft(line, " ")
	start := len(line) - len(trimmed)
	i := strings.Index(trimmed, "  ")
	if i < 0 {
		return -1
	}
	j := i
	for j < len(trimmed) && trimmed[j] == ' ' {
		j++
	}
	return start + j
}

// flagGroup groups the flags defined after it by their order of definition,
// not their names, and leaves the set's sorting as it found it.
func TestFlagGroupByDefinitionOrder(t *testing.T) {
	cmd := &cobra.Command{Use: "x"}
	cmd.Flags().Bool("zeta", false, "")
	end := command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().Bool("alpha", false, "")
	cmd.Flags().Bool("omega", false, "")
	end()
	cmdutil.ApplyFlagGroups(cmd)
	for name, want := range map[string]string{"zeta": "", "alpha": command.GroupOutput, "omega": command.GroupOutput} {
		if got := cmdutil.FlagGroupOf(cmd.Flags().Lookup(name)); got != want {
			t.Errorf("--%s: group %q, want %q", name, got, want)
		}
	}
	if !cmd.Flags().SortFlags {
		t.Error("flagGroup left the flag set unsorted")
	}
}

// A group opened inside another (a helper that defines flags of its own)
// keeps its flags; the outer group gets the ones defined around it.
func TestFlagGroupNested(t *testing.T) {
	cmd := &cobra.Command{Use: "x"}
	outer := command.FlagGroup(cmd, command.GroupConnection)
	cmd.Flags().Bool("url", false, "")
	inner := command.FlagGroup(cmd, command.GroupAuth)
	cmd.Flags().Bool("bearer", false, "")
	inner()
	cmd.Flags().Bool("cwd", false, "")
	outer()
	cmd.Flags().Bool("loose", false, "")
	cmdutil.ApplyFlagGroups(cmd)
	for name, want := range map[string]string{"url": command.GroupConnection, "bearer": command.GroupAuth, "cwd": command.GroupConnection, "loose": ""} {
		if got := cmdutil.FlagGroupOf(cmd.Flags().Lookup(name)); got != want {
			t.Errorf("--%s: group %q, want %q", name, got, want)
		}
	}
}
