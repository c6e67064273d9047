package shellcomp

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/schema"
)

// completionClock bounds what a completion asks a live session's daemon:
// a live session answers in milliseconds, and a Tab must not hang on one
// that does not.
var completionClock = bounds.Clock{Name: "completion", D: time.Second}

// session is the live session a completion may ask: --session as given on
// the command line, else EnvSession when no TARGET is.
func (s *sources) session(cmd *cobra.Command) string {
	if fl := cmd.Flags().Lookup("session"); fl != nil && fl.Value.String() != "" {
		return fl.Value.String()
	}
	// A server after "--" is a TARGET. (cobra's completion parses the
	// flags with a "--" of its own: ArgsLenAtDash cannot say.)
	if n := len(s.Args); n > 1 && slices.Contains(s.Args[1:n-1], "--") {
		return ""
	}
	for _, n := range []string{"url", "server"} {
		if fl := cmd.Flags().Lookup(n); fl != nil && fl.Changed {
			return ""
		}
	}
	return s.EnvSession
}

// list completes with the field key of each item of a listing (tools,
// resources, templates, prompts) the live session's server gives, the
// item's description as the shell's hint.
func (s *sources) list(listing, key string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, item := range s.askListing(cmd.Context(), s.session(cmd), listing) {
			var v string
			if json.Unmarshal(item[key], &v) != nil || !completable(v) {
				continue
			}
			out = append(out, withHint(v, item))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// call completes a call's TOOL with the session's tools, then its
// arguments' names (KEY=) from the tool's inputSchema, then the value of
// an argument whose values the schema closes (an enum, a const, a
// boolean): KEY=VALUE, or KEY:=JSON.
func (s *sources) call() cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return s.list("tools", "name")(cmd, args, toComplete)
		}
		var input *schema.Schema
		for _, item := range s.askListing(cmd.Context(), s.session(cmd), "tools") {
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
			k, _, _ := schema.SplitPair(a)
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
	key, partial, isJSON := schema.SplitPair(toComplete)
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
			if r := []rune(safetext.OneLine(h)); len(r) > 80 {
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
func (s *sources) askListing(ctx context.Context, name, listing string) []map[string]json.RawMessage {
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
		code, err := live.Run(ctx, s.RuntimeDir, name, &live.Request{Args: []string{listing, "--json"}}, &out, &errOut)
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
