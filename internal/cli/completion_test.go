package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/shellcomp"
)

// completions runs mcpi __complete ARGS in-process with the runtime
// directory dir and returns the values offered (without their hints) and
// the directive line.
func completions(t *testing.T, dir string, args ...string) (values []string, directive string) {
	t.Helper()
	code, out, errOut := runLive(t, dir, nil, append([]string{"__complete"}, args...)...)
	if code != command.ExitOK {
		t.Fatalf("__complete %q: exit %d, stderr %q", args, code, errOut)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(line, ":") {
			directive = line
			continue
		}
		v, _, _ := strings.Cut(line, "\t")
		values = append(values, v)
	}
	return values, directive
}

func TestCompleteClosedSets(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"call", "--era", ""}, []string{"auto", "legacy", "modern"}},
		{[]string{"tools", "--era=m"}, []string{"auto", "legacy", "modern"}}, // the shell keeps those that match
		{[]string{"demo-server", "--era", ""}, []string{"legacy", "modern", "both"}},
		{[]string{"info", "--transport", ""}, []string{"auto", "http", "sse"}},
		{[]string{"check", "--host", ""}, []string{"openai", "openai-strict", "anthropic", "anthropic-strict", "gemini", "vscode", "cursor", "windsurf", "claude-desktop", "claude-code", "all"}},
		{[]string{"diff", "--fail-on", ""}, []string{"breaking", "possibly", "any"}},
		{[]string{"call", "--protocol-version", ""}, []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2026-07-28"}},
		{[]string{"session", "start", "--grant", ""}, []string{"authorization_code", "client_credentials", "jwt-bearer", "id-jag"}},
		{[]string{"call", "--elicit", ""}, []string{"accept", "decline", "cancel"}},
		{[]string{"answer", "--elicit", "d"}, []string{"accept", "decline", "cancel"}},
		{[]string{"log-level", ""}, []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish", "powershell"}},
		{[]string{"bench", "--connections", ""}, []string{"one", "per-worker"}},
		{[]string{"chat", "--approve", ""}, []string{"none", "destructive", "all"}},
		{[]string{"connect", "--sampling-approve", ""}, []string{"ask", "auto"}},
		{[]string{"chat", "--host", ""}, []string{"claude-code", "vscode", "cursor", "openai", "openai-strict", "anthropic", "gemini"}},
		{[]string{"connect", "--host", ""}, []string{"claude-code", "vscode", "cursor", "openai", "openai-strict", "anthropic", "gemini"}},
		{[]string{"chat", "--model", ""}, []string{"anthropic:", "openai:", "openai-responses:", "ollama:", "compat:"}},
		{[]string{"call", "--sampling-model", ""}, []string{"anthropic:", "openai:", "openai-responses:", "ollama:", "compat:"}},
	} {
		got, directive := completions(t, dir, tc.args...)
		if !slices.Equal(got, tc.want) {
			t.Errorf("__complete %q: %q, want %q", tc.args, got, tc.want)
		}
		want := ":36"
		if slices.Contains(tc.args, "--host") && tc.args[0] == "check" || slices.Contains(tc.args, "--model") || slices.Contains(tc.args, "--sampling-model") {
			want = ":38" // a comma list, or a model's PROVIDER:: no space after it
		}
		if tc.args[0] != "completion" && directive != want {
			t.Errorf("__complete %q: directive %s, want %s (no files, in this order)", tc.args, directive, want)
		}
	}
}

// Every flag that takes a comma-separated list of known values completes
// the item being typed after those given, with the values not given yet.
func TestCompleteCommaLists(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	got, directive := completions(t, dir, "check", "--host", "openai,g")
	if !slices.Equal(got, []string{"openai,gemini"}) || directive != ":38" {
		t.Errorf("--host openai,g: %q %s, want openai,gemini with no space after it", got, directive)
	}
	f := &command.Factory{IO: command.NewIOStreams(strings.NewReader(""), nil, nil), Executable: os.Executable}
	lists := 0
	var walk func(path []string, c *cobra.Command)
	walk = func(path []string, c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
			values := shellcomp.FlagValues(c, fl.Name)
			if !strings.HasSuffix(fl.Value.Type(), "Slice") || len(values) < 2 { // pflag's slice flags take comma lists
				return
			}
			lists++
			args := append(slices.Clone(path), "--"+fl.Name, values[0]+",")
			got, _ := completions(t, dir, args...)
			if len(got) != len(values)-1 || slices.Contains(got, values[0]+","+values[0]) || !strings.HasPrefix(got[0], values[0]+",") {
				t.Errorf("__complete %q: %q, want the other values after %s,", args, got, values[0])
			}
		})
		for _, sub := range c.Commands() {
			walk(append(slices.Clone(path), sub.Name()), sub)
		}
	}
	for _, c := range subcommands(f) {
		cmd := c.build()
		walk([]string{cmd.Name()}, cmd)
	}
	if lists == 0 {
		t.Error("no comma-list flag found: the test tests nothing")
	}
}

// TestCompleteFilter: --filter completes the search language's fields and
// closed values.
func TestCompleteFilter(t *testing.T) {
	t.Parallel()
	dir := liveDir(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"replay", "t.jsonl", "--filter", "st"}, []string{"status:"}},
		{[]string{"tail", "--filter", "kind:l"}, []string{"kind:lifecycle", "kind:log"}},
	} {
		got, directive := completions(t, dir, tc.args...)
		if !slices.Equal(got, tc.want) || directive != ":6" {
			t.Errorf("__complete %q: %q %s, want %q :6 (no files, no space)", tc.args, got, directive, tc.want)
		}
	}
}

func TestCompleteServerNames(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(file, []byte(`{"mcpServers":{"beta":{"url":"http://127.0.0.1:1/mcp"},"alpha":{"command":"x"},"ev\u001b]0;pwned\u0007il":{"command":"y"}}}`), 0o600)
	got, _ := completions(t, liveDir(t), "call", "--config", file, "--server", "")
	if !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Errorf("--server: %q, want alpha and beta (and not a name the terminal would not show as it is)", got)
	}
}

// With --session (or $MCPI_SESSION and no TARGET), the values come from
// the live session's server, asked of its daemon.
func TestCompleteFromALiveSession(t *testing.T) {
	dir := demoSession(t, "demo")
	has := func(args []string, want ...string) {
		t.Helper()
		got, _ := completions(t, dir, args...)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("__complete %q: %q, want %q in it", args, got, w)
			}
		}
	}
	has([]string{"call", "--session", ""}, "demo")
	has([]string{"connect", "--session", ""}, "demo")
	has([]string{"session", "stop", ""}, "demo")
	has([]string{"session", "show", "d"}, "demo")
	has([]string{"call", "--session", "demo", ""}, "add", "echo", "elicit")
	has([]string{"call", "--session", "demo", "add", ""}, "a=", "b=")
	has([]string{"app-info", "--session", "demo", ""}, "add", "echo")
	has([]string{"prompt", "--session", "demo", ""}, "greet", "code_review")
	has([]string{"complete", "--session", "demo", "--prompt", ""}, "greet")
	has([]string{"complete", "--session", "demo", "--template", ""}, "demo://items/{id}")
	has([]string{"read", "--session", "demo", ""}, "demo://text/hello", "demo://counter")
	has([]string{"subscribe", "--session", "demo", ""}, "demo://counter")

	got, directive := completions(t, dir, "call", "--session", "demo", "add", "a=1", "")
	if !slices.Equal(got, []string{"b="}) || directive != ":6" {
		t.Errorf("a call's arguments: %q %s, want b= with no space after it", got, directive)
	}
	// An argument's value, from the tool's schema: its enum, not files.
	if got, directive := completions(t, dir, "call", "--session", "demo", "fail", "kind="); !slices.Equal(got, []string{"kind=tool", "kind=protocol"}) || directive != ":36" {
		t.Errorf("an enum argument's values: %q %s", got, directive)
	}
	has([]string{"call", "--session", "demo", "nested_args", "enabled="}, "enabled=true", "enabled=false")
	_, out, _ := runLive(t, dir, nil, "__complete", "call", "--session", "demo", "")
	if !strings.Contains(out, "echo\tReturns its text argument unchanged.\n") {
		t.Errorf("a tool's description is not its hint:\n%s", out)
	}

	t.Setenv(command.SessionEnv, "demo")
	has([]string{"call", ""}, "add")
	if got, _ := completions(t, dir, "call", "--", "server", ""); len(got) != 0 {
		t.Errorf("with a TARGET, $MCPI_SESSION is not asked: %q", got)
	}
	t.Setenv(command.SessionEnv, "")
	if got, _ := completions(t, dir, "call", ""); len(got) != 0 {
		t.Errorf("without a session: %q", got)
	}
	if got, _ := completions(t, dir, "call", "--session", "nosuch", ""); len(got) != 0 {
		t.Errorf("a session nobody runs: %q", got)
	}
}

// A server's names that the terminal would not show as they are, or that
// a shell would take apart, are not offered.
func TestCompleteSkipsHostileNames(t *testing.T) {
	dir := liveDir(t)
	startSession(t, dir, "evil", peerArgs("hostile:"+mcptest.HostileEscapes)...)
	_, out, _ := runLive(t, dir, nil, "__complete", "call", "--session", "evil", "")
	if strings.ContainsAny(out, "\x1b\a\u202e") || strings.Contains(out, "evil") {
		t.Errorf("a hostile tool name was offered: %q", out)
	}
}

// The bash script completes in bash --norc, with the bash-completion
// package and without it (whose _get_comp_words_by_ref cobra's script
// calls).
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := mcpiBinary(t)
	rt := filepath.Join(t.TempDir(), "rt")
	os.Mkdir(rt, 0o700)
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"), "XDG_RUNTIME_DIR="+rt, "MCPI_SESSION=")
	mcpi := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mcpi %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	mcpi("session", "start", "demo", "--idle", "2m", "--", bin, "demo-server")
	t.Cleanup(func() { mcpi("session", "stop", "demo") })
	script := filepath.Join(t.TempDir(), "mcpi.bash")
	out, err := exec.Command(bin, "completion", "bash").Output()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(script, out, 0o600)

	// Each line with its words as bash splits them (at '=' and ':' too).
	cases := []struct {
		line  string
		words []string
		want  []string
	}{
		{"mcpi call --era ", []string{"mcpi", "call", "--era", ""}, []string{"auto", "legacy", "modern"}},
		{"mcpi call --era=mo", []string{"mcpi", "call", "--era", "=", "mo"}, []string{"modern"}},
		{"mcpi log-level w", []string{"mcpi", "log-level", "w"}, []string{"warning"}},
		{"mcpi session stop d", []string{"mcpi", "session", "stop", "d"}, []string{"demo"}},
		{"mcpi call --session demo ec", []string{"mcpi", "call", "--session", "demo", "ec"}, []string{"echo"}},
		{"mcpi call --session demo add ", []string{"mcpi", "call", "--session", "demo", "add", ""}, []string{"a=", "b="}},
		{"mcpi read --session demo demo://te", []string{"mcpi", "read", "--session", "demo", "demo", ":", "//te"}, []string{"//text/hello"}},
		{"mcpi pro", []string{"mcpi", "pro"}, []string{"prompt", "prompts", "proxy"}},
		{"mcpi call --session demo fail kind=", []string{"mcpi", "call", "--session", "demo", "fail", "kind", "=", ""}, []string{"tool", "protocol"}},
		// cobra's script quotes the comma for the line: the shell reads it back as one.
		{"mcpi check --host openai,g", []string{"mcpi", "check", "--host", "openai,g"}, []string{`openai\,gemini`}},
	}
	const run = `[ -n "$WITH" ] && source "$WITH"
source "$SCRIPT"
COMP_LINE=$1; COMP_POINT=${#COMP_LINE}; shift
COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
__start_mcpi
printf '%s\n' "${COMPREPLY[@]}"`
	for _, mode := range []struct{ name, with string }{
		{"without bash-completion", ""},
		{"with bash-completion", "/usr/share/bash-completion/bash_completion"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			if mode.with != "" {
				if _, err := os.Stat(mode.with); err != nil {
					t.Skipf("the bash-completion package is not installed (%s)", mode.with)
				}
			}
			for _, tc := range cases {
				cmd := exec.Command(bash, append([]string{"--norc", "--noprofile", "-c", run, "bash", tc.line}, tc.words...)...)
				cmd.Env = append(env, "SCRIPT="+script, "WITH="+mode.with)
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Errorf("%q: %v\n%s", tc.line, err, stderr.String())
					continue
				}
				var got []string
				for _, l := range strings.Split(stdout.String(), "\n") {
					if l = strings.TrimSpace(l); l != "" {
						got = append(got, l)
					}
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("%q: %q, want %q", tc.line, got, tc.want)
				}
				if strings.Contains(stderr.String(), "not found") {
					t.Errorf("%q: %s", tc.line, stderr.String())
				}
			}
		})
	}
}
