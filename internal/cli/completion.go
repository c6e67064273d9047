package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpi-dev/mcpi/internal/auth"
	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/cmdutil"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// completionClock bounds what a completion asks a live session's daemon:
// a live session answers in milliseconds, and a Tab must not hang on one
// that does not.
var completionClock = bounds.Clock{Name: "completion", D: time.Second}

// completing reports whether the command line asks for shell completions
// (cobra's hidden __complete commands, which the scripts run at each Tab).
func completing(args []string) bool {
	return len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
}

// addCompletions gives the tree the completions of values: the closed sets
// of flags, the runtime directory's sessions, the configured servers, and,
// in a live session, the names its server lists. cobra keeps a flag's
// completion for the life of the process, so this is done only for a
// command line that asks for completions.
func addCompletions(f *Factory, root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// mcpi defines no persistent flags: a command's own are its
		// Flags(), visited in their order (LocalNonPersistentFlags would
		// copy and sort them, for every command at every TAB).
		cmdutil.VisitDefined(c.Flags(), func(fl *pflag.Flag) {
			if fn := flagCompletion(f, c, fl.Name); fn != nil {
				c.RegisterFlagCompletionFunc(fl.Name, fn)
			}
		})
		if c.ValidArgsFunction == nil && len(c.ValidArgs) == 0 {
			if fn := argCompletion(f, c); fn != nil {
				c.ValidArgsFunction = fn
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// flagValues are the closed sets of values of flags, by name; the same
// name may mean another set on one command (demo-server --era).
func flagValues(c *cobra.Command, name string) []string {
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
	case "log-level":
		return logLevels()
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
		return []string{connectionsOne, connectionsPerWorker}
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

// flagCompletion returns how the values of c's flag name complete (nil:
// as cobra does, with file names).
func flagCompletion(f *Factory, c *cobra.Command, name string) cobra.CompletionFunc {
	if vs := flagValues(c, name); vs != nil {
		if fl := c.Flags().Lookup(name); fl != nil && commaList(fl) {
			return commaListCompletion(vs)
		}
		return cobra.FixedCompletions(vs, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveKeepOrder)
	}
	switch {
	case name == "model" || name == "sampling-model":
		// The provider's part of PROVIDER:MODEL; the model's name is the
		// person's to type.
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []cobra.Completion{llm.KindAnthropic + ":", llm.KindOpenAI + ":", llm.KindOpenAIResponses + ":", llm.KindOllama + ":", llm.KindCompat + ":"},
				cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveKeepOrder
		}
	case name == "session":
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return sessionNames(f), cobra.ShellCompDirectiveNoFileComp
		}
	case name == "server" && c.Flags().Lookup("config") != nil:
		return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return serverNames(cmd.Flags().Lookup("config").Value.String()), cobra.ShellCompDirectiveNoFileComp
		}
	case name == "filter":
		// The search language: a field's name, or a value of status:,
		// dir: and kind:, in the word being typed.
		return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return query.Complete(toComplete), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
	case c.Name() == "complete" && name == "prompt":
		return sessionList(f, "prompts", "name")
	case c.Name() == "complete" && name == "template":
		return sessionList(f, "templates", "uriTemplate")
	}
	return nil
}

// argCompletion returns how c's positional arguments complete (nil: as
// cobra does, with file names).
func argCompletion(f *Factory, c *cobra.Command) cobra.CompletionFunc {
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
		return callCompletion(f)
	case "mcpi app-info":
		return first(sessionList(f, "tools", "name"))
	case "mcpi read", "mcpi subscribe":
		return first(sessionList(f, "resources", "uri"))
	case "mcpi prompt":
		return first(sessionList(f, "prompts", "name"))
	case "mcpi log-level":
		return first(cobra.FixedCompletions(logLevels(), cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveKeepOrder))
	case "mcpi session show", "mcpi session stop":
		return first(func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return sessionNames(f), cobra.ShellCompDirectiveNoFileComp
		})
	case "mcpi proxy attach":
		return first(func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			infos, _ := proxyNames(f.runtimeDir())
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
func sessionNames(f *Factory) []cobra.Completion {
	dir := f.runtimeDir()
	if live.CheckDir(dir) != nil {
		return nil
	}
	names, _ := live.Names(dir)
	return names
}

// serverNames lists the servers of the configuration files mcpi finds (or
// of file), as mcpi servers does.
func serverNames(file string) []cobra.Completion {
	servers, err := loadServers(file, func(string) {})
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []cobra.Completion
	for _, s := range servers {
		if completable(s.Name) && !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}

// completable says whether a value from a server or a file can be offered
// to the shell as it is: nothing that the sink would show otherwise than it
// is (and a shell would take otherwise: no tab, no newline).
func completable(v string) bool {
	return v != "" && sanitize(v, false) == v && !strings.ContainsAny(v, "\t\n")
}

// completionSession is the live session a completion may ask: --session
// as given on the command line, else $MCPI_SESSION when no TARGET is.
func completionSession(f *Factory, cmd *cobra.Command) string {
	if fl := cmd.Flags().Lookup("session"); fl != nil && fl.Value.String() != "" {
		return fl.Value.String()
	}
	// A server after "--" is a TARGET. (cobra's completion parses the
	// flags with a "--" of its own: ArgsLenAtDash cannot say.)
	if n := len(f.Args); n > 1 && slices.Contains(f.Args[1:n-1], "--") {
		return ""
	}
	for _, n := range []string{"url", "server"} {
		if fl := cmd.Flags().Lookup(n); fl != nil && fl.Changed {
			return ""
		}
	}
	return os.Getenv(sessionEnv)
}

// sessionList completes with the field key of each item of a listing
// (tools, resources, templates, prompts) the live session's server gives,
// the item's description as the shell's hint.
func sessionList(f *Factory, listing, key string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, item := range askListing(cmd.Context(), f, completionSession(f, cmd), listing) {
			var v string
			if json.Unmarshal(item[key], &v) != nil || !completable(v) {
				continue
			}
			out = append(out, withHint(v, item))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// callCompletion completes a call's TOOL with the session's tools, then
// its arguments' names (KEY=) from the tool's inputSchema, then the value
// of an argument whose values the schema closes (an enum, a const, a
// boolean): KEY=VALUE, or KEY:=JSON.
func callCompletion(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return sessionList(f, "tools", "name")(cmd, args, toComplete)
		}
		var input *schema.Schema
		for _, item := range askListing(cmd.Context(), f, completionSession(f, cmd), "tools") {
			var name string
			if json.Unmarshal(item["name"], &name) != nil || name != args[0] {
				continue
			}
			input, _ = schema.Compile(item["inputSchema"])
			break
		}
		if input == nil {
			return nil, cobra.ShellCompDirectiveDefault
		}
		if strings.Contains(toComplete, "=") {
			return argValueCompletions(input, toComplete)
		}
		given := map[string]bool{}
		for _, a := range args[1:] {
			k, _, _ := splitPair(a)
			given[k] = true
		}
		var out []cobra.Completion
		for _, p := range input.Properties() {
			if k := p.Name; completable(k) && !given[k] && !strings.ContainsAny(k, "= ") {
				out = append(out, k+"=")
			}
		}
		if len(out) == 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	}
}

// argValueCompletions completes KEY=VALUE (or KEY:=JSON) with the values
// the property KEY may take, when its schema closes them: its enum (or the
// consts of a titled enum), its const, or true and false. Anything else (a
// string, a number, an array) completes as the shell does, with file names
// (a path argument).
func argValueCompletions(input *schema.Schema, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	key, partial, isJSON := splitPair(toComplete)
	p, ok := input.Property(key)
	if !ok || slices.Contains(p.Types, "array") {
		return nil, cobra.ShellCompDirectiveDefault
	}
	values := p.Enum
	if c, ok := p.Raw["const"]; ok && len(values) == 0 {
		values = []any{c}
	}
	if len(values) == 0 && slices.Contains(p.Types, "boolean") {
		values = []any{true, false}
	}
	if len(values) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	head := key + "="
	if isJSON {
		head = key + ":="
	}
	var out []cobra.Completion
	for _, v := range values {
		text, isString := v.(string)
		if isJSON || !isString {
			b, err := json.Marshal(v)
			if err != nil {
				continue
			}
			text = string(b)
		}
		// A value with a space is offered: the shell's script quotes it.
		if completable(text) && strings.HasPrefix(text, partial) {
			out = append(out, head+text)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// withHint adds an item's description (or title, or name) as the hint the
// shells show next to a value.
func withHint(v string, item map[string]json.RawMessage) cobra.Completion {
	for _, k := range []string{"description", "title", "name"} {
		var h string
		if json.Unmarshal(item[k], &h) == nil && h != "" && h != v {
			if r := []rune(oneLine(h)); len(r) > 80 {
				h = string(r[:79]) + "…"
			} else {
				h = string(r)
			}
			return cobra.CompletionWithDesc(v, h)
		}
	}
	return v
}

// askListing runs mcpi LISTING --json in the live session name and returns
// the items, or nothing when there is no such session, it fails, or it
// does not answer within completionClock: a completion never starts a
// server and never waits longer than that.
func askListing(ctx context.Context, f *Factory, name, listing string) []map[string]json.RawMessage {
	if name == "" || live.ValidName(name) != nil {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := completionClock.Context(ctx)
	defer cancel()
	type answer struct {
		out  []byte
		code int
		err  error
	}
	// Run waits for the daemon's last words after a cancel: the completion
	// does not, and ends with its clock.
	done := make(chan answer, 1)
	go func() {
		var out, errOut bytes.Buffer
		code, err := live.Run(ctx, f.runtimeDir(), name, &live.Request{Args: []string{listing, "--json"}}, &out, &errOut)
		done <- answer{out.Bytes(), code, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		return nil
	}
	if a.err != nil || a.code != 0 {
		return nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(a.out, &items); err != nil {
		return nil
	}
	return items
}
