package cmdutil

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Help shows a command's flags in groups, in this order, each under its
// title: a call's --args is not lost among forty flags of OAuth. Every
// flag of every command is in one (TestEveryFlagInAGroup walks the tree).
var FlagGroups = []struct{ ID, Title string }{
	{GroupArgs, "Arguments and answers"},
	{GroupLoad, "Load"},
	{GroupOutput, "Output"},
	{GroupSession, "Live session"},
	{GroupServe, "Serving"},
	{GroupConnection, "Connection"},
	{GroupAuth, "Authorization (HTTP servers)"},
	{GroupHelp, "Help"},
}

// The groups of flags.
const (
	// GroupArgs: what the command sends (its arguments) and how the
	// server's requests are answered (roots, sampling, elicitation).
	GroupArgs = "args"
	// GroupLoad: how much load mcpi bench makes, and how fast.
	GroupLoad = "load"
	// GroupOutput: what is printed, saved and recorded.
	GroupOutput = "output"
	// GroupSession: live sessions (--session, a session's own settings).
	GroupSession = "session"
	// GroupServe: what mcpi serves or listens on (replay --serve, proxy,
	// demo-server).
	GroupServe = "serve"
	// GroupConnection: the target and how to reach it.
	GroupConnection = "connection"
	// GroupAuth: authorization to HTTP servers (--bearer, OAuth).
	GroupAuth = "auth"
	// GroupHelp: --help (cobra's, in this group without annotation) and
	// --version.
	GroupHelp = "help"
)

// flagGroupKey is the annotation of a flag that names its group.
const flagGroupKey = "mcpi/group"

// flagRangesKey is the annotation of a command that holds its groups of
// flags until they are needed (ApplyFlagGroups): "FROM-TO:GROUP;" for each
// group, FROM and TO positions in the order the flags were defined.
const flagRangesKey = "mcpi/flag-groups"

// FlagGroup puts the flags defined on cmd from now on, until the function
// it returns is called, in the group g (one of FlagGroups):
//
//	defer FlagGroup(cmd, GroupConnection)()   // a function defining flags
//
//	end := FlagGroup(cmd, GroupOutput)
//	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
//	end()
//
// A flag already in a group (defined by a nested helper) keeps it.
//
// It runs for every command at every start, --version and a shell's TAB
// included, so it only notes which flags (by their order of definition) a
// group holds; ApplyFlagGroups annotates them when help is shown. Sorting
// the set as it grew, once per group, was a quarter of mcpi's start, and a
// map for each flag of the tree a tenth.
func FlagGroup(cmd *cobra.Command, g string) (end func()) {
	fs := cmd.Flags()
	from := definedFlags(fs)
	return func() {
		if to := definedFlags(fs); to > from {
			if cmd.Annotations == nil {
				cmd.Annotations = map[string]string{}
			}
			cmd.Annotations[flagRangesKey] += strconv.Itoa(from) + "-" + strconv.Itoa(to) + ":" + g + ";"
		}
	}
}

// ApplyFlagGroups annotates each flag of c with its group (flagGroupKey),
// from what FlagGroup noted; the first group noted for a flag, a nested
// helper's, wins.
func ApplyFlagGroups(c *cobra.Command) {
	ranges := c.Annotations[flagRangesKey]
	if ranges == "" {
		return
	}
	delete(c.Annotations, flagRangesKey)
	var defined []*pflag.Flag
	VisitDefined(c.Flags(), func(f *pflag.Flag) { defined = append(defined, f) })
	for r := range strings.SplitSeq(strings.TrimSuffix(ranges, ";"), ";") {
		span, g, _ := strings.Cut(r, ":")
		a, b, _ := strings.Cut(span, "-")
		from, _ := strconv.Atoi(a)
		to, _ := strconv.Atoi(b)
		for _, f := range defined[from:min(to, len(defined))] {
			if f.Annotations[flagGroupKey] == nil {
				if f.Annotations == nil {
					f.Annotations = map[string][]string{}
				}
				f.Annotations[flagGroupKey] = []string{g}
			}
		}
	}
}

// definedFlags is how many flags fs has.
func definedFlags(fs *pflag.FlagSet) int {
	n := 0
	VisitDefined(fs, func(*pflag.Flag) { n++ })
	return n
}

// VisitDefined calls fn for each flag of fs in the order they were defined.
func VisitDefined(fs *pflag.FlagSet, fn func(*pflag.Flag)) {
	sorted := fs.SortFlags
	fs.SortFlags = false
	fs.VisitAll(fn)
	fs.SortFlags = sorted
}

// AddJSONFlag adds --json, in the Output group, to a command whose
// output has a JSON form.
func AddJSONFlag(cmd *cobra.Command, json *bool, usage string) {
	end := FlagGroup(cmd, GroupOutput)
	cmd.Flags().BoolVar(json, "json", false, usage)
	end()
}

// FlagGroupOf returns the group of f ("" when it has none).
func FlagGroupOf(f *pflag.Flag) string {
	if g := f.Annotations[flagGroupKey]; len(g) > 0 {
		return g[0]
	}
	if f.Name == "help" {
		// cobra adds it to every command when it runs.
		return GroupHelp
	}
	return ""
}

// flagGroupUsages is the flags part of a command's help: each group under
// its title, the flags aligned across groups as cobra aligns them in one
// list. A flag in no group is listed last, under "Flags".
func flagGroupUsages(c *cobra.Command) string {
	ApplyFlagGroups(c)
	all := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	all.AddFlagSet(c.LocalFlags())
	all.AddFlagSet(c.InheritedFlags())
	// One line per flag, and one more per line break in its usage or
	// default, in the order VisitAll visits them.
	lines := strings.SplitAfter(all.FlagUsages(), "\n")
	byGroup := map[string][]string{}
	i := 0
	all.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		g := FlagGroupOf(f)
		for n := 1 + strings.Count(f.Usage, "\n") + strings.Count(f.DefValue, "\n"); n > 0 && i < len(lines); n-- {
			byGroup[g] = append(byGroup[g], lines[i])
			i++
		}
	})
	var b strings.Builder
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		b.WriteString("\n\n" + title + ":\n")
		b.WriteString(strings.TrimRight(strings.Join(lines, ""), " \t\n"))
	}
	for _, g := range FlagGroups {
		section(g.Title, byGroup[g.ID])
		delete(byGroup, g.ID)
	}
	var rest []string
	for _, ls := range byGroup {
		rest = append(rest, ls...)
	}
	section("Flags", rest)
	return b.String()
}

// Usage writes a command's usage as cobra's usage template does, with the
// flags in their groups. It is a function, not a template: executing a
// template (text/template finds methods by name) makes the linker keep
// every exported method of every type in the binary, and the model SDKs'
// thousands of types were then half of mcpi's size and start-up.
// TestBinaryKeepsNoDeadMethods keeps it so.
func Usage(c *cobra.Command) error {
	var b strings.Builder
	b.WriteString("Usage:")
	if c.Runnable() {
		b.WriteString("\n  " + c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n  " + c.CommandPath() + " [command]")
	}
	if len(c.Aliases) > 0 {
		b.WriteString("\n\nAliases:\n  " + c.NameAndAliases())
	}
	if c.HasExample() {
		b.WriteString("\n\nExamples:\n" + c.Example)
	}
	if c.HasAvailableSubCommands() {
		subcommandUsages(&b, c)
	}
	if c.HasAvailableLocalFlags() || c.HasAvailableInheritedFlags() {
		b.WriteString(flagGroupUsages(c))
	}
	if c.HasHelpSubCommands() {
		b.WriteString("\n\nAdditional help topics:")
		for _, s := range c.Commands() {
			if s.IsAdditionalHelpTopicCommand() {
				b.WriteString("\n  " + rpad(s.CommandPath(), s.CommandPathPadding()) + " " + s.Short)
			}
		}
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n\nUse \"" + c.CommandPath() + " [command] --help\" for more information about a command.")
	}
	b.WriteString("\n")
	_, err := io.WriteString(c.OutOrStderr(), b.String())
	return err
}

// subcommandUsages lists c's commands, in their groups when it has any.
func subcommandUsages(b *strings.Builder, c *cobra.Command) {
	list := func(group string, all bool) {
		for _, s := range c.Commands() {
			if (all || s.GroupID == group) && (s.IsAvailableCommand() || s.Name() == "help") {
				b.WriteString("\n  " + rpad(s.Name(), s.NamePadding()) + " " + s.Short)
			}
		}
	}
	if len(c.Groups()) == 0 {
		b.WriteString("\n\nAvailable Commands:")
		list("", true)
		return
	}
	for _, g := range c.Groups() {
		b.WriteString("\n\n" + g.Title)
		list(g.ID, false)
	}
	if !c.AllChildCommandsHaveGroup() {
		b.WriteString("\n\nAdditional Commands:")
		list("", false)
	}
}

// rpad is cobra's: s padded with spaces to n.
func rpad(s string, n int) string { return fmt.Sprintf("%-*s", n, s) }
