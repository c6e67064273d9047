package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
)

// Every command the guide names (on its indented example lines) exists,
// and it lists every exit code.
func TestAgentsGuideCommands(t *testing.T) {
	root := NewCmdRoot(&command.Factory{IO: &command.IOStreams{}})
	code, out, _ := runCLI(t, "", "help", "agents")
	if code != command.ExitOK || strings.TrimSpace(out) != strings.TrimSpace(agentsGuide) {
		t.Fatalf("mcpi help agents: exit %d, %q", code, out)
	}
	named := 0
	for _, m := range regexp.MustCompile(`(?m)(?:^ +|; )mcpi((?: [a-z][a-z-]*)+)`).FindAllStringSubmatch(agentsGuide, -1) {
		words := strings.Fields(m[1])
		cmd := root
		for _, w := range words {
			var sub = cmd.Commands()
			found := false
			for _, c := range sub {
				if c.Name() == w {
					cmd, found = c, true
					break
				}
			}
			if !found {
				if cmd == root || cmd.HasSubCommands() {
					t.Errorf("the guide names %q: mcpi has no command %q", "mcpi"+m[1], cmd.CommandPath()+" "+w)
				}
				break
			}
		}
		named++
	}
	if named < 15 {
		t.Errorf("only %d commands named", named)
	}
	for _, c := range []command.ExitCode{command.ExitOK, command.ExitToolError, command.ExitUsage, command.ExitConnect, command.ExitProtocol, command.ExitTimeout, command.ExitAuth, command.ExitVerify, ExitWaiting, command.ExitEnvironment, command.ExitInterrupted} {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^  %d +\S`, c)).MatchString(agentsGuide) {
			t.Errorf("the guide lacks exit code %d", c)
		}
	}
}

// guideShape returns the guide's entry for label in its list of --json
// shapes: the label's line and the lines that continue it.
func guideShape(t *testing.T, label string) string {
	t.Helper()
	_, block, _ := strings.Cut(agentsGuide, "Stable --json shapes:")
	block, _, _ = strings.Cut(block, "Exit codes:")
	var entry []string
	for _, line := range strings.Split(block, "\n") {
		switch {
		case strings.HasPrefix(line, "  "+label+" "):
			entry = append(entry, line)
		case len(entry) > 0 && strings.HasPrefix(line, "   "):
			entry = append(entry, line)
		case len(entry) > 0:
			return strings.Join(entry, "\n")
		}
	}
	if len(entry) == 0 {
		t.Fatalf("the guide has no --json shape for %s", label)
	}
	return strings.Join(entry, "\n")
}

// The --json shapes the guide promises are what the commands print.
func TestAgentsGuideShapes(t *testing.T) {
	t.Parallel()
	demo := peerArgs("demo")
	dir := liveDir(t)
	startSession(t, dir, "agents", demo...)
	for _, c := range []struct {
		label string
		args  []string
		code  command.ExitCode
		keys  []string // paths in the output; [0] steps into an array
	}{
		{"call", []string{"call", "add", "a=1", "b=2", "--json"}, command.ExitOK, []string{"content.[0].type", "content.[0].text", "structuredContent"}},
		{"call", []string{"call", "fail", "--json"}, command.ExitToolError, []string{"content", "isError"}},
		{"tools", []string{"tools", "--json"}, command.ExitOK, []string{"[0].name", "[0].description", "[0].inputSchema"}},
		{"read", []string{"read", "demo://text/hello", "--json"}, command.ExitOK, []string{"contents.[0].uri", "contents.[0].mimeType", "contents.[0].text"}},
		{"a failure", []string{"call", "nope", "--json"}, command.ExitProtocol, []string{"error.message", "error.exitCode", "error.code"}},
		{"session list", []string{"session", "list", "--json"}, command.ExitOK, []string{"[0].name", "[0].target", "[0].pid", "[0].state"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			shape := guideShape(t, c.label)
			args := c.args
			if c.label != "session list" {
				args = append(append([]string{}, args...), "--session", "agents")
			}
			code, out, errOut := runLive(t, dir, nil, args...)
			var doc any
			if code != c.code || json.Unmarshal([]byte(out), &doc) != nil {
				t.Fatalf("exit %d (want %d)\nstdout %q\nstderr %q", code, c.code, out, errOut)
			}
			for _, path := range c.keys {
				v := doc
				for _, step := range strings.Split(path, ".") {
					if step == "[0]" {
						a, _ := v.([]any)
						if len(a) == 0 {
							t.Fatalf("%s: no array at %s in %s", path, step, out)
						}
						v = a[0]
						continue
					}
					if !strings.Contains(shape, `"`+step+`"`) {
						t.Errorf("the guide's shape for %s does not name %q:\n%s", c.label, step, shape)
					}
					m, _ := v.(map[string]any)
					var ok bool
					if v, ok = m[step]; !ok {
						t.Fatalf("%s: no %q in %s", path, step, out)
					}
				}
			}
		})
	}
}
