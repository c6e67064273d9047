package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
)

// parseArgs runs a command's flag parsing and returns the options its run
// function would get (nil when parsing failed).
func parseArgs[O any](newCmd func(*command.Factory, func(context.Context, *O) error) *cobra.Command, argv []string) (*O, error) {
	ios, _, _, _ := command.Test()
	var got *O
	cmd := newCmd(&command.Factory{IO: ios}, func(_ context.Context, o *O) error {
		got = o
		return nil
	})
	cmd.SetArgs(argv)
	cmd.SetOut(ios.Out)
	cmd.SetErr(ios.ErrOut)
	return got, cmd.Execute()
}

func TestCallFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		argv    []string
		wantErr bool
		check   func(t *testing.T, o *CallOptions)
	}{
		{
			name: "stdio target after dash",
			argv: []string{"echo", "text=hi", "n:=3", "--timeout", "5s", "-e", "A=1", "--cwd", "/tmp", "--", "node", "server.js", "--port", "1"},
			check: func(t *testing.T, o *CallOptions) {
				if o.Tool != "echo" || !reflect.DeepEqual(o.Pairs, []string{"text=hi", "n:=3"}) {
					t.Errorf("tool %q pairs %v", o.Tool, o.Pairs)
				}
				if !reflect.DeepEqual(o.Target.Command, []string{"node", "server.js", "--port", "1"}) {
					t.Errorf("command %v", o.Target.Command)
				}
				if o.Target.Timeout != 5*time.Second || o.Target.Dir != "/tmp" || !reflect.DeepEqual(o.Target.Env, []string{"A=1"}) {
					t.Errorf("target %+v", o.Target)
				}
			},
		},
		{
			name: "positional URL",
			argv: []string{"echo", "https://example.com/mcp", "text=x", "-H", "X-A: b", "--transport", "sse"},
			check: func(t *testing.T, o *CallOptions) {
				if o.Target.URL != "https://example.com/mcp" || o.Target.Transport != "sse" || o.Tool != "echo" {
					t.Errorf("target %+v tool %s", o.Target, o.Tool)
				}
				h, _ := o.Target.Header()
				if h.Get("X-A") != "b" {
					t.Errorf("header %v", h)
				}
			},
		},
		{
			name: "answers",
			argv: []string{"t", "--root", "/a", "--root", "file:///b", "--sampling-reply", "@r.json", "--elicit", "decline", "--elicit-field", "k=v", "--json", "--save", "d", "--no-validate", "--", "x"},
			check: func(t *testing.T, o *CallOptions) {
				if !reflect.DeepEqual(o.Roots, []string{"/a", "file:///b"}) || o.SamplingReply != "@r.json" || o.Elicit != "decline" ||
					!reflect.DeepEqual(o.ElicitFields, []string{"k=v"}) || !o.JSON || o.Save != "d" || !o.NoValidate {
					t.Errorf("options %+v", o)
				}
			},
		},
		{name: "no target", argv: []string{"echo"}, wantErr: true},
		{name: "empty command", argv: []string{"echo", "--"}, wantErr: true},
		{name: "bad pair", argv: []string{"echo", "x", "--", "s"}, wantErr: true},
		{name: "bad timeout", argv: []string{"echo", "--timeout", "soon", "--", "s"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseArgs(NewCmdCall, tc.argv)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if tc.check != nil && got != nil {
				tc.check(t, got)
			}
		})
	}
}

// --root goes through roots.Parse: a path that exists becomes its file://
// URI; anything refused is a usage error naming what was given.
func TestRootFlag(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a b")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	o := (&command.ConnOptions{Roots: []string{dir}}).NewRun()
	if err := o.Prepare(); err != nil || len(o.MadeRoots) != 1 || o.MadeRoots[0].URI != "file://"+filepath.ToSlash(filepath.Dir(dir))+"/a%20b" {
		t.Errorf("roots %+v, %v", o.MadeRoots, err)
	}
	for _, bad := range []string{"/no/such/dir", "https://example.com/repo", "file:///no/such"} {
		o := &command.ConnOptions{Roots: []string{bad}}
		err := o.Validate()
		var fe *command.FlagError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "invalid --root: root \""+bad+"\"") {
			t.Errorf("--root %s: %v", bad, err)
		}
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                     "plain",
		"\x1b[31mred\x1b[0m":        `\e[31mred\e[0m`,
		"osc52 \x1b]52;c;aGk=\x07":  `osc52 \e]52;c;aGk=\x07`,
		"bidi \u202etxt":            `bidi \u202etxt`,
		"c1 \u009b2J":               `c1 \u009b2J`,
		"bad \xff utf8":             `bad \xff utf8`,
		"tab\tnewline\n":            `tab\x09newline\x0a`,
		"café 日本語 🎉":                "café 日本語 🎉",
		"zero width \u200b joiner":  `zero width \u200b joiner`,
		"tag \U000E0041":            `tag \U000e0041`,
		"isolate \u2066x\u2069 end": `isolate \u2066x\u2069 end`,
	} {
		if got := command.Sanitize(in, false); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	if got := command.Sanitize("a\tb\nc\r", true); got != "a\tb\nc\\x0d" {
		t.Errorf("keepNewlines: %q", got)
	}
}

// A command line that names a command builds that command only; help,
// completion and anything unknown get the whole tree.
func TestCommandFor(t *testing.T) {
	f := &command.Factory{IO: &command.IOStreams{}}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "echo", "--", "x"}, "call"},
		{[]string{"tools", "--json"}, "tools"},
		{[]string{"demo-server"}, "demo-server"},
		{nil, ""},
		{[]string{"--help"}, ""},
		{[]string{"help", "call"}, ""},
		{[]string{"completion", "bash"}, ""},
		{[]string{"__complete", "ca"}, ""},
		{[]string{"__complete", "call"}, ""},
		{[]string{"__complete", "call", ""}, "call"},
		{[]string{"__complete", "session", "start", "--"}, "session"},
		{[]string{"__completeNoDesc", "tools", "--j"}, "tools"},
		{[]string{"__complete", "--session", "x", "call", ""}, ""},
		{[]string{"--version"}, noCommand},
		{[]string{"--version", "call"}, ""},
		{[]string{"cal"}, ""},
	} {
		if got := commandFor(f, tc.args); got != tc.want {
			t.Errorf("commandFor(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
	root := newCmdRoot(f, "call")
	if cs := root.Commands(); len(cs) != 1 || cs[0].Name() != "call" {
		t.Errorf("commands of the root built for call: %v", cs)
	}
	if all := NewCmdRoot(f).Commands(); len(all) != len(subcommands(f)) {
		t.Errorf("the whole tree has %d commands, the table %d", len(all), len(subcommands(f)))
	}
}
