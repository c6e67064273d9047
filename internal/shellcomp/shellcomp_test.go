package shellcomp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/attach"
	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/live"
	"github.com/mcpi-dev/mcpi/internal/schema"
)

// tree is a command tree of mcpi's shape, where the completions look:
// each command takes --session.
func tree() *cobra.Command {
	root := &cobra.Command{Use: "mcpi"}
	add := func(parent *cobra.Command, name string) *cobra.Command {
		c := &cobra.Command{Use: name, Run: func(*cobra.Command, []string) {}}
		c.Flags().String("session", "", "")
		parent.AddCommand(c)
		return c
	}
	call := add(root, "call")
	for _, f := range []string{"url", "server", "config"} {
		call.Flags().String(f, "", "")
	}
	add(root, "read")
	complete := add(root, "complete")
	complete.Flags().String("prompt", "", "")
	complete.Flags().String("template", "", "")
	add(root, "check").Flags().StringSlice("host", nil, "")
	add(root, "bench").Flags().String("connections", "one", "")
	add(root, "chat").Flags().String("model", "", "")
	add(root, "eval").Flags().StringSlice("model", nil, "")
	add(add(root, "session"), "stop")
	add(add(root, "proxy"), "attach")
	return root
}

// complete runs cobra's __complete ARGS on a tree given the completions
// of src, and returns the lines offered (a value, a tab and its hint when
// it has one) and the directive line.
func complete(t *testing.T, src Sources, args ...string) (lines []string, directive string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	root := tree()
	src.Args = append([]string{cobra.ShellCompRequestCmd}, args...)
	Register(root, src)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(io.Discard)
	root.SetArgs(src.Args)
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("__complete %q: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("__complete %q waited for the test's own deadline", args)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if strings.HasPrefix(line, ":") {
			directive = line
			continue
		}
		lines = append(lines, line)
	}
	return lines, directive
}

// daemon serves name in dir as a live session's daemon whose server lists
// what listings holds, by listing (mcpi tools --json's answer for
// "tools"); any other command fails.
func daemon(t *testing.T, dir, name string, listings map[string]string) {
	t.Helper()
	ln, err := live.Listen(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	srv := live.NewServer(func(_ context.Context, req *live.Request, stdout, _ io.Writer) int {
		items, ok := listings[req.Args[0]]
		if !ok || !slices.Equal(req.Args[1:], []string{"--json"}) {
			return 1
		}
		io.WriteString(stdout, items)
		return 0
	}, func() live.Status { return live.Status{Name: name} }, 0)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		srv.Serve(ctx, ln, nil)
	}()
	t.Cleanup(func() {
		cancel()
		<-ended
	})
}

func TestRequested(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"__complete", "call", ""}, true},
		{[]string{"__completeNoDesc", "tools", "--j"}, true},
		{[]string{"call", "__complete"}, false},
		{[]string{"completion", "bash"}, false},
		{nil, false},
	} {
		if got := Requested(tc.args); got != tc.want {
			t.Errorf("Requested(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// The values of a live session's listings: the tools (with their
// descriptions as hints, on one line, cut at 80 characters), a tool's
// arguments and their closed values, the prompts, templates and resources;
// never a name the terminal would not show as it is, or that a shell would
// take apart.
func TestCompleteFromADaemon(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	long := strings.Repeat("x", 100)
	daemon(t, dir, "demo", map[string]string{
		"tools": `[
			{"name":"add","description":"Adds two\nnumbers.","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"c d":{"type":"number"}}}},
			{"name":"fail","title":"Fails","inputSchema":{"type":"object","properties":{"kind":{"type":"string","enum":["tool","protocol","evil\u001b[2J"]}}}},
			{"name":"ev\u001b]0;pwned\u0007il","description":"hostile"},
			{"name":"tab\tbed"},
			{"name":"long","description":"` + long + `"}]`,
		"prompts":   `[{"name":"greet"},{"name":"code_review","description":"Reviews code."}]`,
		"templates": `[{"uriTemplate":"demo://items/{id}","name":"items"}]`,
		"resources": `[{"uri":"demo://text/hello"},{"uri":"demo://counter"}]`,
	})
	src := Sources{RuntimeDir: dir}
	for _, tc := range []struct {
		args      []string
		want      []string
		directive string
	}{
		{[]string{"call", "--session", "demo", ""}, []string{"add\tAdds two numbers.", "fail\tFails", "long\t" + strings.Repeat("x", 79) + "…"}, ":4"},
		{[]string{"call", "--session", "demo", "add", ""}, []string{"a=", "b="}, ":6"},
		{[]string{"call", "--session", "demo", "add", "a=1", ""}, []string{"b="}, ":6"},
		{[]string{"call", "--session", "demo", "fail", "kind="}, []string{"kind=tool", "kind=protocol"}, ":36"},
		{[]string{"call", "--session", "demo", "nosuch", ""}, nil, ":0"},
		{[]string{"complete", "--session", "demo", "--prompt", ""}, []string{"greet", "code_review\tReviews code."}, ":4"},
		{[]string{"complete", "--session", "demo", "--template", ""}, []string{"demo://items/{id}\titems"}, ":4"},
		{[]string{"read", "--session", "demo", ""}, []string{"demo://text/hello", "demo://counter"}, ":4"},
		{[]string{"read", "--session", "demo", "demo://counter", ""}, nil, ":0"},
		{[]string{"call", "--session", "nosuch", ""}, nil, ":4"},
		{[]string{"call", "--session", "../demo", ""}, nil, ":4"},
	} {
		got, directive := complete(t, src, tc.args...)
		if !slices.Equal(got, tc.want) || directive != tc.directive {
			t.Errorf("__complete %q: %q %s, want %q %s", tc.args, got, directive, tc.want, tc.directive)
		}
	}
}

// Without --session, the session the environment names is asked, but for
// a command line that names a server: after "--", or with --url or
// --server.
func TestCompleteAsksTheEnvironmentsSession(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	daemon(t, dir, "demo", map[string]string{"tools": `[{"name":"add"}]`})
	src := Sources{RuntimeDir: dir, EnvSession: "demo", Servers: func(string) ([]config.Server, error) { return nil, nil }}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"call", ""}, []string{"add"}},
		{[]string{"call", "--", ""}, nil},
		{[]string{"call", "--url", "http://127.0.0.1:1/mcp", ""}, nil},
		{[]string{"call", "--server", "github", ""}, nil},
	} {
		if got, _ := complete(t, src, tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("__complete %q with a session in the environment: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// A daemon that does not answer holds a completion no longer than its
// clock: it offers nothing, and no file names.
func TestCompletionNeverWaits(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	ln, err := live.Listen(dir, "stuck")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn // read nothing, answer nothing
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	got, directive := complete(t, Sources{RuntimeDir: dir}, "call", "--session", "stuck", "")
	if len(got) != 0 || directive != ":4" {
		t.Errorf("%q %s, want nothing and :4", got, directive)
	}
}

// The names of the runtime directory (sessions, running or ended, and
// proxies with their server as the hint) and of the configuration files.
func TestCompleteNames(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	daemon(t, dir, "demo", nil)
	if err := live.WriteRecord(dir, &live.Status{Name: "ended", State: "stopped"}); err != nil {
		t.Fatal(err)
	}
	var configFile, proxyDir string
	src := Sources{
		RuntimeDir: dir,
		Servers: func(file string) ([]config.Server, error) {
			configFile = file
			return []config.Server{{Name: "beta"}, {Name: "alpha"}, {Name: "beta"}, {Name: "ev\u001b]0;pwned\u0007il"}, {Name: "new\nline"}}, nil
		},
		Proxies: func(dir string) ([]*attach.Info, error) {
			proxyDir = dir
			return []*attach.Info{{Name: "fs", Title: "npx\n-y\x1b[2J server"}}, nil
		},
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"call", "--session", ""}, []string{"demo", "ended"}},
		{[]string{"session", "stop", ""}, []string{"demo", "ended"}},
		{[]string{"session", "stop", "demo", ""}, nil},
		{[]string{"call", "--config", "mcp.json", "--server", ""}, []string{"alpha", "beta"}},
		{[]string{"proxy", "attach", ""}, []string{"fs\tnpx -y\\e[2J server"}},
	} {
		if got, _ := complete(t, src, tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("__complete %q: %q, want %q", tc.args, got, tc.want)
		}
	}
	if configFile != "mcp.json" || proxyDir != dir {
		t.Errorf("the servers of %q, the proxies of %q: want mcp.json's and %s's", configFile, proxyDir, dir)
	}
}

// A closed set, and a comma-separated list of one: the item being typed,
// after those given, with the values not given yet.
func TestCompleteClosedSetsAndLists(t *testing.T) {
	t.Parallel()
	var rest []string
	for _, h := range append(check.HostIDs(), "all") {
		if h != "openai" && h != "gemini" {
			rest = append(rest, "openai,gemini,"+h)
		}
	}
	for _, tc := range []struct {
		args      []string
		want      []string
		directive string
	}{
		{[]string{"bench", "--connections", ""}, []string{"one", "per-worker"}, ":36"},
		{[]string{"check", "--host", "openai,g"}, []string{"openai,gemini"}, ":38"},
		{[]string{"check", "--host", "openai,gemini,"}, rest, ":38"},
		// A model's provider; in eval's list, the item after those given.
		{[]string{"chat", "--model", ""}, []string{"anthropic:", "openai:", "openai-responses:", "ollama:", "compat:"}, ":38"},
		{[]string{"eval", "--model", "openai:gpt-4o,"}, []string{"openai:gpt-4o,anthropic:", "openai:gpt-4o,openai:", "openai:gpt-4o,openai-responses:", "openai:gpt-4o,ollama:", "openai:gpt-4o,compat:"}, ":38"},
		{[]string{"chat", "--model", "a,"}, []string{"anthropic:", "openai:", "openai-responses:", "ollama:", "compat:"}, ":38"},
	} {
		got, directive := complete(t, Sources{}, tc.args...)
		if !slices.Equal(got, tc.want) || directive != tc.directive {
			t.Errorf("__complete %q: %q %s, want %q %s", tc.args, got, directive, tc.want, tc.directive)
		}
	}
}

// An argument whose values the tool's schema closes completes with them:
// an enum (a titled one too), a const, a boolean; as JSON after :=.
func TestArgValueCompletions(t *testing.T) {
	t.Parallel()
	input, err := schema.Compile(json.RawMessage(`{"type":"object","properties":{
		"location":{"type":"string","enum":["New York","Chicago","Los Angeles","Paris"]},
		"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"m","title":"Medium"}]},
		"mode":{"const":"fast"},
		"on":{"type":"boolean"},
		"level":{"type":"integer","enum":[1,2]},
		"path":{"type":"string"},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typed     string
		want      []string
		directive cobra.ShellCompDirective
	}{
		{"location=", []string{"location=New York", "location=Chicago", "location=Los Angeles", "location=Paris"}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder},
		{"location=P", []string{"location=Paris"}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder},
		{"size=", []string{"size=s", "size=m"}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder},
		{"mode=", []string{"mode=fast"}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder},
		{"on=", []string{"on=true", "on=false"}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder},
		{"on:=t", []string{"on:=true"}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder},
		{"level=", []string{"level=1", "level=2"}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder},
		{"size:=", []string{`size:="s"`, `size:="m"`}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder},
		{"path=", nil, cobra.ShellCompDirectiveDefault},
		{"tags=", nil, cobra.ShellCompDirectiveDefault},
		{"nosuch=", nil, cobra.ShellCompDirectiveDefault},
	} {
		got, directive := argValueCompletions(input, tc.typed)
		if !slices.Equal(got, tc.want) || directive != tc.directive {
			t.Errorf("%s<TAB>: %q %d, want %q %d", tc.typed, got, directive, tc.want, tc.directive)
		}
	}
}
