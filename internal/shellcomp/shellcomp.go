package shellcomp

import (
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpi-dev/mcpi/internal/attach"
	"github.com/mcpi-dev/mcpi/internal/auth"
	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/cmdutil"
	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/loadreport"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// Sources are where the values of completions come from that only the
// command layer knows.
type Sources struct {
	// RuntimeDir is the directory of live sessions and of proxies.
	RuntimeDir string
	// Args is the command line after mcpi: a server after its "--" is a
	// TARGET, and no session is asked.
	Args []string
	// EnvSession is the session the environment names ($MCPI_SESSION),
	// asked when the command line names neither a session nor a server.
	EnvSession string
	// Servers reads the servers of a configuration file, or of the usual
	// places when file is "" (--server).
	Servers func(file string) ([]config.Server, error)
	// Proxies lists the proxies of dir that answer (mcpi proxy attach).
	Proxies func(dir string) ([]*attach.Info, error)
}

// Requested reports whether the command line asks for shell completions
// (cobra's hidden __complete commands, which the scripts run at each Tab).
func Requested(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

// Register gives the tree the completions of values: the closed sets of
// flags, the runtime directory's sessions, the configured servers, and, in
// a live session, the names its server lists. cobra keeps a flag's
// completion for the life of the process, so this is for a command line
// that asks for completions only.
func Register(root *cobra.Command, src Sources) {
	s := &sources{src}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// mcpi defines no persistent flags: a command's own are its
		// Flags(), visited in their order (LocalNonPersistentFlags would
		// copy and sort them, for every command at every TAB).
		cmdutil.VisitDefined(c.Flags(), func(fl *pflag.Flag) {
			if fn := s.flag(c, fl.Name); fn != nil {
				c.RegisterFlagCompletionFunc(fl.Name, fn)
			}
		})
		if c.ValidArgsFunction == nil && len(c.ValidArgs) == 0 {
			if fn := s.args(c); fn != nil {
				c.ValidArgsFunction = fn
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// sources completes from the Sources it was given.
type sources struct{ Sources }

// FlagValues returns the closed set of values of c's flag name, nil when
// its values are open; the same name may mean another set on one command
// (demo-server --era).
func FlagValues(c *cobra.Command, name string) []string {
	switch name {
	case "era":
		if c.Name() == "demo-server" {
			return []string{"legacy", "modern", "both"}
		}
		return []string{session.EraAuto, session.EraLegacy, session.EraModern}
	case "transport":
		return []string{"auto", "http", "sse"}
	case "protocol-version":
		return append(slices.Clone(mcp.LegacyRevisions), mcp.ModernRevisions...)
	case "grant":
		return auth.Grants
	case "elicit":
		return []string{mcp.ElicitAccept, mcp.ElicitDecline, mcp.ElicitCancel}
	case "host":
		if c.Name() == "chat" || c.Name() == "connect" {
			return chat.Hosts // how the model is shown the tools
		}
		return append(check.HostIDs(), "all")
	case "sampling-approve":
		return []string{"ask", "auto"}
	case "approve":
		return []string{string(chat.ApproveNone), string(chat.ApproveSafe), string(chat.ApproveAll)}
	case "fail-on":
		return []string{"breaking", "possibly", "any"}
	case "connections":
		return []string{"one", loadreport.PerWorker}
	}
	return nil
}

// commaList reports whether a flag takes a comma-separated list
// (--host openai,gemini): pflag's slice flags do.
func commaList(fl *pflag.Flag) bool { return strings.HasSuffix(fl.Value.Type(), "Slice") }

// commaListCompletion completes the item of a comma-separated list being
// typed, after those given before it, with the values not given yet.
func commaListCompletion(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		i := strings.LastIndex(toComplete, ",")
		prefix, partial := toComplete[:i+1], toComplete[i+1:]
		given := map[string]bool{}
		for _, v := range strings.Split(prefix, ",") {
			given[v] = true
		}
		var out []cobra.Completion
		for _, v := range values {
			if !given[v] && strings.HasPrefix(v, partial) {
				out = append(out, prefix+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder | cobra.ShellCompDirectiveNoSpace
	}
}

func logLevels() []string {
	var out []string
	for _, l := range mcp.LoggingLevels {
		out = append(out, string(l))
	}
	return out
}

// flag returns how the values of c's flag name complete (nil: as cobra
// does, with file names).
func (s *sources) flag(c *cobra.Command, name string) cobra.CompletionFunc {
	if vs := FlagValues(c, name); vs != nil {
		if fl := c.Flags().Lookup(name); fl != nil && commaList(fl) {
			return commaListCompletion(vs)
		}
		return cobra.FixedCompletions(vs, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveKeepOrder)
	}
	switch {
	case name == "model" || name == "sampling-model":
		// The provider's part of PROVIDER:MODEL; the model's name is the
		// person's to type. In a list (eval --model a,b), the item being
		// typed, after those given.
		list := false
		if fl := c.Flags().Lookup(name); fl != nil {
			list = commaList(fl)
		}
		return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			prefix := ""
			if i := strings.LastIndex(toComplete, ","); list && i >= 0 {
				prefix = toComplete[:i+1]
			}
			var out []cobra.Completion
			for _, p := range []string{llm.KindAnthropic, llm.KindOpenAI, llm.KindOpenAIResponses, llm.KindOllama, llm.KindCompat} {
				out = append(out, prefix+p+":")
			}
			return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveKeepOrder
		}
	case name == "session":
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return s.sessionNames(), cobra.ShellCompDirectiveNoFileComp
		}
	case name == "server" && c.Flags().Lookup("config") != nil:
		return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return s.serverNames(cmd.Flags().Lookup("config").Value.String()), cobra.ShellCompDirectiveNoFileComp
		}
	case name == "filter":
		// The search language: a field's name, or a value of status:,
		// dir: and kind:, in the word being typed.
		return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return query.Complete(toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
	case c.Name() == "complete" && name == "prompt":
		return s.list("prompts", "name")
	case c.Name() == "complete" && name == "template":
		return s.list("templates", "uriTemplate")
	}
	return nil
}

// args returns how c's positional arguments complete (nil: as cobra does,
// with file names).
func (s *sources) args(c *cobra.Command) cobra.CompletionFunc {
	first := func(fn cobra.CompletionFunc) cobra.CompletionFunc {
		return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveDefault
			}
			return fn(cmd, args, toComplete)
		}
	}
	switch c.CommandPath() {
	case "mcpi call", "mcpi app":
		return s.call()
	case "mcpi app-info":
		return first(s.list("tools", "name"))
	case "mcpi read", "mcpi subscribe":
		return first(s.list("resources", "uri"))
	case "mcpi prompt":
		return first(s.list("prompts", "name"))
	case "mcpi log-level":
		return first(cobra.FixedCompletions(logLevels(), cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveKeepOrder))
	case "mcpi session show", "mcpi session stop":
		return first(func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return s.sessionNames(), cobra.ShellCompDirectiveNoFileComp
		})
	case "mcpi proxy attach":
		return first(func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			infos, _ := s.Proxies(s.RuntimeDir)
			var names []cobra.Completion
			for _, i := range infos {
				names = append(names, cobra.CompletionWithDesc(i.Name, safetext.OneLine(i.Title)))
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		})
	}
	return nil
}

// sessionNames lists the sessions of the runtime directory, running or
// ended (as mcpi session list does, without asking their daemons).
func (s *sources) sessionNames() []cobra.Completion {
	if live.CheckDir(s.RuntimeDir) != nil {
		return nil
	}
	names, _ := live.Names(s.RuntimeDir)
	return names
}

// serverNames lists the servers of the configuration files mcpi finds (or
// of file), as mcpi servers does.
func (s *sources) serverNames(file string) []cobra.Completion {
	servers, err := s.Servers(file)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []cobra.Completion
	for _, sv := range servers {
		if completable(sv.Name) && !seen[sv.Name] {
			seen[sv.Name] = true
			out = append(out, sv.Name)
		}
	}
	sort.Strings(out)
	return out
}

// completable says whether a value from a server or a file can be offered
// to the shell as it is: nothing that the sink would show otherwise than it
// is (and a shell would take otherwise: no tab, no newline).
func completable(v string) bool {
	return v != "" && safetext.Sanitize(v, false) == v && !strings.ContainsAny(v, "\t\n")
}
