package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
)

// Every command's argument mistakes are usage errors (exit 2, with the
// usage hint), never "could not connect": for each command of the tree,
// each number of positional words from 0 to 3 that its validator refuses
// is run, and so is a word that names no subcommand of a command that
// groups others.
func TestEveryArgumentMistakeIsAUsageError(t *testing.T) {
	ios, _, _, _ := command.Test()
	root := newCmdRoot(&command.Factory{IO: ios}, "")
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
		if code != command.ExitUsage || !strings.Contains(errOut, "--help' for usage") {
			t.Errorf("mcpi %s: exit %d, stderr %q; want exit 2 and the usage hint", strings.Join(args, " "), code, errOut)
		}
		if out != "" {
			t.Errorf("mcpi %s printed on stdout: %q", strings.Join(args, " "), out)
		}
	}
}

// A verb that runs in a live session only, given a server instead (after
// "--" or as a URL) or no session at all, says that it needs a session and
// how to start one, as a usage error: never "unknown command" nor a
// complaint about its own arguments.
func TestSessionVerbsGivenAServer(t *testing.T) {
	t.Setenv(command.SessionEnv, "")
	for _, args := range [][]string{
		{"tail", "--", "srv"},
		{"subscribe", "file:///a", "--", "srv"},
		{"subscribe", "file:///a", "--unsubscribe", "--", "srv"},
		{"log-level", "debug", "--", "srv"},
		{"roots", "add", "/tmp", "--", "srv"},
		{"roots", "--", "srv"},
		{"pending", "--", "srv"},
		{"answer", "1", "--", "srv"},
		{"tail", "http://127.0.0.1:1/mcp"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != command.ExitUsage || !strings.Contains(errOut, "runs in a live session, not against a server: start one with mcpi session start NAME TARGET") {
			t.Errorf("mcpi %s: exit %d, %q", strings.Join(args, " "), code, errOut)
		}
	}
	for _, args := range [][]string{{"tail"}, {"roots", "add", "/tmp"}, {"log-level", "debug"}, {"subscribe", "file:///a"}} {
		code, _, errOut := runCLI(t, "", args...)
		if code != command.ExitUsage || !strings.Contains(errOut, "runs in a live session: give --session NAME or set $MCPI_SESSION (mcpi session start NAME TARGET starts one)") {
			t.Errorf("mcpi %s: exit %d, %q", strings.Join(args, " "), code, errOut)
		}
	}
}

// session show and stop take $MCPI_SESSION when no NAME is given.
func TestSessionShowAndStopTakeTheEnvironment(t *testing.T) {
	t.Setenv(command.SessionEnv, "")
	for _, verb := range []string{"show", "stop"} {
		code, _, errOut := runCLI(t, "", "session", verb)
		if code != command.ExitUsage || !strings.Contains(errOut, "give the session's NAME, or set $MCPI_SESSION") {
			t.Errorf("session %s without a name: exit %d, %q", verb, code, errOut)
		}
	}
	t.Setenv(command.SessionEnv, "nosuchsession")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	for _, verb := range []string{"show", "stop"} {
		code, _, errOut := runCLI(t, "", "session", verb)
		if code == command.ExitUsage || !strings.Contains(errOut, "nosuchsession") {
			t.Errorf("session %s with $MCPI_SESSION: exit %d, %q", verb, code, errOut)
		}
	}
}

// Every error kind is documented beside the exit codes.
func TestErrorKindsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range command.ErrorKinds {
		if !strings.Contains(string(doc), "| `"+k+"` |") {
			t.Errorf("docs/cli.md does not list the error kind %q", k)
		}
	}
}

// The --json error object names the error's kind.
func TestJSONErrorsHaveAKind(t *testing.T) {
	demo := peerArgs("demo")
	for _, tc := range []struct {
		args []string
		kind string
	}{
		{with(demo, "call", "nosuch", "--json"), command.KindToolNotFound},
		{with(demo, "call", "add", "a=x", "--json"), command.KindUsage},
		{with(demo, "read", "demo://nosuch", "--json"), command.KindProtocol},
		{[]string{"tools", "--json", "http://127.0.0.1:1/mcp"}, command.KindUnreachable},
		{with(demo, "call", "slow", "ms=5000", "--timeout", "200ms", "--json"), command.KindTimeout},
	} {
		_, out, _ := runCLI(t, "", tc.args...)
		var doc command.JSONErrorObject
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Error.Kind != tc.kind {
			t.Errorf("mcpi %s: stdout %q, want kind %q", strings.Join(tc.args, " "), out, tc.kind)
		}
	}
}
