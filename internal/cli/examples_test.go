package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// example says what the docs test does with one command of the docs or of
// a --help example: run it (in its group, in the table's order, in the
// group's working directory) and expect its exit code, or say why it is not
// run here. Every command, run or not, must parse: its command path exists
// and its flags are flags of that command.
type example struct {
	group string // the commands of a group share a working directory and run in order
	cmd   string // as the docs write it (no prompt, no comment, continuations joined)
	code  int    // the exit code expected

	skip   string // why it is not run here (it still parses)
	output bool   // the docs show it as output: neither run nor parsed
	tui    bool   // the TUI: run up to its terminal check (exit 2), so its target and flags are checked

	setup bool     // no doc's: it prepares the commands after it
	bg    bool     // runs beside the commands after it, until the group's last one ends it
	until string   // runs until its output says this, then is interrupted (Ctrl-C)
	sub   []string // old, new pairs applied to cmd before it runs, after the shared ones
	grab  string   // a regular expression on its output: group 1 replaces exampleTaskID in the commands after it
	join  bool     // first wait for the commands running beside (their exit codes are checked then)

	unchecked string // why the exit code of a setup command is not checked (a fault of mcpi, to fix)
}

// waitsAfterUpdate says why a call whose task tasks update answered is
// not expected to end.
const waitsAfterUpdate = "in a session, a call whose task's input request tasks update answered keeps waiting for the parked request (mcpi pending still lists it) until the session stops"

// needsModel is why an example that calls a model is not run here (mcpi
// eval's tests run it against fake providers).
const needsModel = "needs a model provider: a key and the network (the tests use fake providers)"

// exampleTaskID is the placeholder the tasks examples use for a task's id.
const exampleTaskID = "3f1c..."

// everythingCmd is how the docs start server-everything: the test runs
// the copy scripts/deps.sh installs, pinned.
const everythingCmd = "npx -y @modelcontextprotocol/server-everything"

// examples is every command of README.md, docs/*.md and the --help
// examples, in the order each group runs them. A command the docs show in
// several places is listed once.
var examples = []example{
	// The tour and the one-shot commands, against the demo server.
	{group: "tour", cmd: "mcpi demo"},
	{group: "tour", cmd: "mcpi tools -- mcpi demo-server"},
	{group: "tour", cmd: "mcpi call add a=2 b=3 -- mcpi demo-server"},
	{group: "tour", cmd: `mcpi call sample prompt=hi --sampling-reply "hello" -- mcpi demo-server`},
	{group: "tour", cmd: "mcpi read demo://text/hello -- mcpi demo-server"},
	{group: "tour", cmd: "mcpi read demo://binary/logo.png --save out/ -- mcpi demo-server"},
	{group: "tour", cmd: "mcpi read demo://binary/logo.png --raw -- mcpi demo-server > logo.png"},
	{group: "tour", cmd: "mcpi prompt greet name=Ada -- mcpi demo-server"},
	{group: "tour", cmd: "mcpi prompt greet name=Ada style=pirate -- mcpi demo-server"},
	{group: "tour", cmd: "mcpi complete --prompt greet style=p -- mcpi demo-server"},
	{group: "tour", cmd: "mcpi complete --template 'demo://greeting/{lang}/{name}' lang=f -- mcpi demo-server"},
	{group: "tour", cmd: "mcpi ping -- mcpi demo-server"},
	{group: "tour", cmd: "mcpi info -- mcpi demo-server"},
	{group: "tour", cmd: "mcpi info http://127.0.0.1:8080/mcp --json"},
	{group: "tour", cmd: "mcpi call echo text=hello http://127.0.0.1:8080/mcp --json"},
	{group: "tour", cmd: "mcpi call get_content_types --save out/ -- mcpi demo-server"},
	{group: "tour", cmd: "mcpi tools http://127.0.0.1:8080/mcp --json"},
	{group: "tour", cmd: "mcpi resources http://127.0.0.1:8080/mcp --json"},
	{group: "tour", cmd: "mcpi templates http://127.0.0.1:8080/mcp --json"},
	{group: "tour", cmd: "mcpi prompts http://127.0.0.1:8080/mcp --json"},
	// What a host's model would see: no model is called.
	{group: "tour", cmd: "mcpi chat --model ollama:qwen3 --host claude-code --show-tools -- mcpi demo-server"},
	// The configuration the examples assume: a server named github (the
	// demo server, in the working directory's .mcp.json).
	{group: "tour", cmd: "mcpi servers"},
	{group: "tour", cmd: "mcpi tools --server github"},
	{group: "tour", cmd: "mcpi connect -- " + everythingCmd, tui: true},
	{group: "tour", cmd: "mcpi connect https://example.com/mcp", tui: true},
	{group: "tour", cmd: "mcpi connect http://127.0.0.1:8080/mcp", tui: true},
	{group: "tour", cmd: "mcpi connect --server github", tui: true},
	{group: "tour", cmd: "mcpi connect", tui: true},

	// Record, replay, verify, proxy, export.
	{group: "trace", cmd: "mcpi call add a=1 b=2 --record t.jsonl -- ./my-server"},
	{group: "trace", cmd: "mcpi replay t.jsonl"},
	{group: "trace", cmd: "mcpi call add a=1 b=2 -- mcpi replay t.jsonl --serve"},
	{group: "trace", cmd: "mcpi replay t.jsonl --verify -- ./my-server-v2"},
	{group: "trace", cmd: "mcpi replay t.jsonl --verify --ignore 'result._meta' -- ./my-server"},
	{group: "trace", cmd: "mcpi trace export --har t.jsonl > t.har"},
	{group: "trace", cmd: "mcpi trace export --otlp t.jsonl > spans.json"},
	{group: "trace", cmd: "mcpi call add a=1 b=2 --otlp-endpoint http://127.0.0.1:4318 -- ./my-server"},
	{group: "trace", cmd: "mcpi proxy --record host.jsonl -- ./my-server"},
	{group: "trace", cmd: "mcpi call add a=1 b=2 --record t.jsonl -- mcpi demo-server"},

	// Faults on the wire (docs/intercept.md); the fixtures hold the files.
	{group: "intercept", cmd: "mcpi proxy --record cancel.jsonl --faults slow.yaml -- ./my-server"},
	{group: "intercept", cmd: "mcpi replay cancel.jsonl"},
	{group: "intercept", cmd: "mcpi proxy --record cut.jsonl --faults cut.yaml --seed 1 -- ./my-server"},
	{cmd: "mcpi proxy --record cut.jsonl --faults cut.yaml --seed 1 --listen 127.0.0.1:8080 --url http://127.0.0.1:3000/mcp", skip: "a listener that serves until interrupted, before a server at :3000 (internal/proxy tests the HTTP faults in-process)"},
	{group: "intercept", cmd: "mcpi replay cut.jsonl --filter kind:intercept"},
	{group: "intercept", cmd: "mcpi call add a=1 b=2 --record t.jsonl -- ./my-server", setup: true},
	{group: "intercept", cmd: "mcpi call add a=1 b=2 -- mcpi replay t.jsonl --serve --faults cut.yaml --seed 2 --record hostile.jsonl", code: 3},
	{group: "intercept", cmd: "mcpi proxy --ui --record t.jsonl --break 'method:tools/call tool:delete_' --listen 127.0.0.1:8080 --url http://127.0.0.1:3000/mcp", tui: true},

	// Surface snapshots and their diffs.
	{group: "surface", cmd: "mcpi snapshot -o surface.json -- ./server"},
	{group: "surface", cmd: "mcpi snapshot -o surface.json --ignore /serverInfo/version -- ./server"},
	{group: "surface", cmd: "mcpi diff surface.json -- ./server"},
	{group: "surface", cmd: "mcpi diff surface.json --markdown -- ./server > comment.md"},
	{group: "surface", cmd: "mcpi diff surface.json --markdown -- ./server > surface.md"},
	{group: "surface", cmd: "mcpi snapshot -o old.json -- ./server", setup: true},
	{group: "surface", cmd: "mcpi snapshot -o new.json -- ./my-server-v2", setup: true},
	{group: "surface", cmd: "mcpi diff old.json new.json --fail-on possibly"},

	// MCP Apps, against the project's App server.
	{group: "apps", cmd: "mcpi tools --apps -- ./my-server", sub: []string{"./my-server", "./apps-server"}},
	{group: "apps", cmd: "mcpi app-info show-chart -- ./my-server", sub: []string{"./my-server", "./apps-server"}},
	{group: "apps", cmd: "mcpi app-info show-chart -- node server.js", sub: []string{"node server.js", "./apps-server"}},
	{group: "apps", cmd: "mcpi app show-chart series=a -- ./my-server", sub: []string{"./my-server", "./apps-server"}, until: "App of show-chart", code: 130},
	{group: "apps", cmd: "mcpi app show-chart series=a -- node server.js", sub: []string{"node server.js", "./apps-server"}, until: "App of show-chart", code: 130},

	// Skills, against the project's skills server.
	{group: "skills", cmd: "mcpi skills -- ./skills-server"},
	{group: "skills", cmd: "mcpi skills --json -- ./skills-server"},
	{group: "skills", cmd: "mcpi skill pdf-processing -- ./skills-server"},
	{group: "skills", cmd: "mcpi skill skill://pdf-processing/SKILL.md --json -- ./skills-server"},
	{group: "skills", cmd: "mcpi read --dir skill://pdf-processing -- ./skills-server"},
	{group: "skills", cmd: "mcpi session start work -- ./skills-server", setup: true},
	{group: "skills", cmd: "mcpi skill pdf-processing references/FORMS.md --session work"},
	{group: "skills", cmd: "mcpi session stop work", setup: true},

	// server-everything, the reference server.
	{group: "everything", cmd: "mcpi tools -- " + everythingCmd},
	{group: "everything", cmd: "mcpi resources -- " + everythingCmd},
	{group: "everything", cmd: "mcpi templates -- " + everythingCmd},
	{group: "everything", cmd: "mcpi prompts -- " + everythingCmd},
	{group: "everything", cmd: "mcpi check -- " + everythingCmd},

	// mcpi check (docs/check.md).
	{group: "check", cmd: "mcpi check --server github --sarif > github-mcp.sarif"},
	{group: "check", cmd: `mcpi check --call --json -- ./my-server | jq '.findings[] | select(.severity=="error")'`},
	{group: "check", cmd: "mcpi check --host openai,vscode -- ./my-server", code: 1}, // OpenAI rejects the demo's tools without properties
	{group: "check", cmd: "mcpi check --all"},

	// mcpi test: the collection docs/test.md shows is smoke.yaml, and tests/ holds it too.
	{group: "test", cmd: "mcpi test smoke.yaml"},
	{group: "test", cmd: "mcpi test smoke.yaml -- ./my-server"},
	{group: "test", cmd: "mcpi test smoke.yaml -- mcpi demo-server"},
	{group: "test", cmd: "mcpi test --junit report.xml tests/*.yaml"},
	{group: "test", cmd: "mcpi test --tap tests/*.yaml"},
	{group: "test", cmd: "mcpi test --junit mcp-report.xml tests/mcp/*.yaml -- node dist/server.js", sub: []string{"node dist/server.js", "mcpi demo-server"}},
	{group: "test", cmd: "mcpi session start dev -- mcpi demo-server", setup: true},
	{group: "test", cmd: "mcpi test smoke.yaml --session dev"},
	{group: "test", cmd: "mcpi session stop dev", setup: true},
	{group: "test", cmd: "mcpi test --update smoke.yaml"},

	// mcpi bench (its runs shortened: the flags are what is checked).
	{group: "bench", cmd: "mcpi bench echo text=hi -n 20000 -c 8 -- mcpi demo-server"},
	{group: "bench", cmd: "mcpi bench echo text=hi -n 10000 -c 16 -- mcpi demo-server"},
	{group: "bench", cmd: "mcpi bench add a=1 b=2 -d 30s --rate 500 http://127.0.0.1:8080/mcp", sub: []string{"-d 30s", "-d 2s"}},
	{group: "bench", cmd: "mcpi bench smoke.yaml -c 8 --connections per-worker -d 1m --json", sub: []string{"-d 1m", "-d 2s"}},

	// A live session on the demo server, and an agent's parked requests.
	{group: "session", cmd: "mcpi session start demo -- mcpi demo-server"},
	{group: "session", cmd: "mcpi tail --session demo", bg: true},
	{group: "session", cmd: "mcpi tail --wire --json --session demo | jq .", bg: true},
	{group: "session", cmd: "mcpi call add a=1 b=2 --session demo"},
	{group: "session", cmd: "MCPI_SESSION=demo mcpi tools"},
	{group: "session", cmd: "mcpi roots --session demo"},
	{group: "session", cmd: "mcpi roots add ./src --session demo"},
	{group: "session", cmd: "mcpi roots set ~/project /tmp/data --session demo", sub: []string{"/tmp/data", "$PWD/data"}},
	{group: "session", cmd: "mcpi roots remove file:///tmp/data --session demo", sub: []string{"file:///tmp/data", "file://$PWD/data"}},
	{group: "session", cmd: "mcpi log-level debug --session demo"},
	{group: "session", cmd: "mcpi subscribe demo://counter --session demo"},
	{group: "session", cmd: "mcpi call sample prompt=hi --no-wait --session demo", setup: true, code: 8},
	{group: "session", cmd: "mcpi call elicit --no-wait --session demo", setup: true, code: 8},
	{group: "session", cmd: "mcpi call elicit --no-wait --session demo", setup: true, code: 8},
	{group: "session", cmd: "mcpi pending --session demo"},
	{group: "session", cmd: "mcpi pending --session demo --json"},
	{group: "session", cmd: "mcpi answer 1 --sampling-reply 'Paris' --session demo"},
	{group: "session", cmd: "mcpi answer 2 --elicit-field name=Ada --session demo"},
	{group: "session", cmd: "mcpi answer 3 --decline --session demo"},
	{group: "session", cmd: "mcpi session stop demo", setup: true},

	// An agent's call that waits for an answer, on a server whose tool
	// confirm asks one (the project's modern test server).
	{group: "jobs", cmd: "mcpi session start demo -- ./modern-server", setup: true},
	{group: "jobs", cmd: "mcpi call confirm --no-wait --session demo", code: 8},
	{group: "jobs", cmd: "mcpi answer 1 --elicit-field ok=true --session demo"},
	{group: "jobs", cmd: "mcpi result 1 --session demo"},
	{group: "jobs", cmd: "mcpi session stop demo", setup: true},

	// Tasks: a session on server-everything, whose research tool leaves a
	// task behind, and one on the project's tasks server (2026-07-28).
	{group: "tasks", cmd: "mcpi session start everything -- " + everythingCmd, setup: true},
	{group: "tasks", cmd: "mcpi call simulate-research-query topic=x --session everything", setup: true, grab: `task ([0-9a-f]+): completed`},
	{group: "tasks", cmd: "mcpi tasks list --session everything"},
	{group: "tasks", cmd: "mcpi tasks list --session everything --json"},
	{group: "tasks", cmd: "mcpi tasks get 3f1c... --session everything"},
	{group: "tasks", cmd: "mcpi tasks get 3f1c... --session everything --json"},
	{group: "tasks", cmd: "mcpi tasks result 3f1c... --session everything"},
	{group: "tasks", cmd: "mcpi tasks result 3f1c... --session everything --json"},
	{group: "tasks", cmd: "mcpi call simulate-research-query topic=y --session everything", setup: true, bg: true, grab: `task ([0-9a-f]+): working`, code: 130}, // a task cancelled elsewhere ends its call with 130
	{group: "tasks", cmd: "mcpi tasks cancel 3f1c... --session everything"},
	{group: "tasks", cmd: "mcpi session stop everything", setup: true, join: true},
	{group: "tasks", cmd: "mcpi session start modern -- ./tasks-server", setup: true},
	{group: "tasks", cmd: "mcpi call confirm --session modern", setup: true, bg: true, grab: `task (\S+): input_required`, unchecked: waitsAfterUpdate},
	{group: "tasks", cmd: "mcpi tasks update 3f1c... --elicit-field confirm=true --session modern"},
	{group: "tasks", cmd: "mcpi call confirm --session modern", setup: true, bg: true, grab: `task (\S+): input_required`, unchecked: waitsAfterUpdate},
	{group: "tasks", cmd: `mcpi tasks update 3f1c... --responses '{"confirm":{"action":"decline"}}' --session modern`},
	{group: "tasks", cmd: "mcpi session stop modern", setup: true},

	// A snapshot to edit for mcpi eval --tools-from (docs/models.md).
	{group: "eval", cmd: "mcpi snapshot -o edited.json -- mcpi demo-server"},

	// Not run here.
	{cmd: "mcpi check https://example.com/mcp --sarif > mcp.sarif", skip: "a remote URL"},
	{cmd: "mcpi chat --model openai:gpt-4.1 --prompt 'add 2 and 3' --approve all -- mcpi demo-server", skip: "needs a model provider: a key and the network (the tests use fake providers)"},
	{cmd: "mcpi eval cases.yaml --model anthropic:claude-haiku-4-5,openai:gpt-5.4-mini --runs 10 -- mcpi demo-server", skip: needsModel},
	{cmd: "mcpi eval cases.yaml --model openai:gpt-5.4-mini --runs 20 --json -- mcpi demo-server > base.json", skip: needsModel},
	{cmd: "mcpi eval cases.yaml --model openai:gpt-5.4-mini --runs 20 --baseline base.json --markdown -- mcpi demo-server", skip: needsModel},
	{cmd: "mcpi eval cases.yaml --model openai:gpt-5.4-mini --runs 20 --tools-from edited.json --baseline base.json -- mcpi demo-server", skip: needsModel},
	{cmd: "mcpi eval cases.yaml --model openai:gpt-5.4-mini --runs 10 --record traces/ -- mcpi demo-server", skip: needsModel},
	{cmd: `mcpi check https://example.com/mcp --bearer "$TOKEN"`, skip: "a remote URL and a real token"},
	{cmd: "mcpi snapshot https://example.com/mcp --ignore /serverInfo/version", skip: "a remote URL"},
	{cmd: "mcpi app-info show-chart --json https://example.com/mcp", skip: "a remote URL"},
	{cmd: "mcpi app show-chart --no-open --record app.jsonl https://example.com/mcp", skip: "a remote URL"},
	{cmd: "mcpi test --json tests/*.yaml https://example.com/mcp", skip: "a remote URL"},
	{cmd: "mcpi test --junit report.xml *.yaml https://example.com/mcp", skip: "a remote URL"},
	{cmd: "mcpi check could not reach http://127.0.0.1:1/mcp. Step by step:", output: true},
	{cmd: "mcpi proxy: faults: 14 frames judged, seed 42 (--seed 42 repeats the run)", output: true},
}

// TestExamplesRun runs every command of README.md, docs/*.md and the
// --help examples as the examples table says, with the real binary (mcpi on
// PATH), and fails on a command the table does not know, on a table entry
// no doc has any more, and on a command that does not parse.
func TestExamplesRun(t *testing.T) {
	found := docCommands(t)
	known := map[string]*example{}
	for i := range examples {
		e := &examples[i]
		if (e.group == "") == (e.skip == "" && !e.output) {
			t.Errorf("%q: an entry has a group, or says why it is not run", e.cmd)
		}
		if e.setup {
			continue
		}
		if known[e.cmd] != nil {
			t.Errorf("the examples table lists %q twice", e.cmd)
		}
		known[e.cmd] = e
		if _, ok := found[e.cmd]; !ok {
			t.Errorf("the examples table lists %q, which no doc and no --help has any more: remove it", e.cmd)
		}
	}
	cmds := make([]string, 0, len(found))
	for c := range found {
		cmds = append(cmds, c)
	}
	sort.Strings(cmds)
	for _, c := range cmds {
		e := known[c]
		if e == nil {
			t.Errorf("%s: %q is in no group of the examples table (examples_test.go): say how it runs, or why it cannot run here", strings.Join(found[c], ", "), c)
			continue
		}
		if e.output {
			continue
		}
		if err := parsesAsMcpi(c); err != nil {
			t.Errorf("%s: %q does not parse: %v", strings.Join(found[c], ", "), c, err)
		}
	}
	if t.Failed() {
		return
	}

	env := newExampleEnv(t)
	var order []string
	groups := map[string][]example{}
	for _, e := range examples {
		if e.skip != "" || e.output || e.group == "" {
			continue
		}
		if groups[e.group] == nil {
			order = append(order, e.group)
		}
		groups[e.group] = append(groups[e.group], e)
	}
	for _, g := range order {
		t.Run(g, func(t *testing.T) {
			t.Parallel()
			env.runGroup(t, groups[g])
		})
	}
}

// docFiles are the documents whose commands are examples.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../../README.md"}, files...)
}

// docCommands returns every mcpi command of the docs and of the --help
// examples, each with where it is written.
func docCommands(t *testing.T) map[string][]string {
	t.Helper()
	found := map[string][]string{}
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range markdownCommands(string(b)) {
			found[c.text] = append(found[c.text], fmt.Sprintf("%s:%d", strings.TrimPrefix(f, "../../"), c.line))
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, line := range commandLines(strings.Split(c.Example, "\n")) {
			found[line] = append(found[line], c.CommandPath()+" --help")
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCmdRoot(&command.Factory{IO: &command.IOStreams{}}))
	return found
}

// docCommand is a command of a markdown file and the line it starts on.
type docCommand struct {
	text string
	line int
}

// markdownCommands returns the mcpi commands of the code blocks of a
// markdown document: fenced blocks, and blocks indented by four spaces
// after a blank line.
func markdownCommands(doc string) []docCommand {
	var out []docCommand
	var block []string
	start := 0
	flush := func() {
		lines := commandLines(block)
		for _, l := range lines {
			// The line a command starts on: the first block line that begins it.
			n := start
			for i, b := range block {
				if strings.Contains(b, firstWords(l)) {
					n = start + i
					break
				}
			}
			out = append(out, docCommand{text: l, line: n})
		}
		block = nil
	}
	fenced, indented, blank := false, false, true
	for i, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "```"):
			if fenced {
				flush()
			} else {
				start = i + 2
			}
			fenced = !fenced
			blank = false
			continue
		case fenced:
			block = append(block, line)
			continue
		case strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t"):
			if !indented && blank {
				indented, start = true, i+1
			}
			if indented {
				block = append(block, line)
			}
		default:
			if indented {
				flush()
				indented = false
			}
		}
		blank = strings.TrimSpace(line) == ""
	}
	flush()
	return out
}

// firstWords returns the first three words of a command, to find its line.
func firstWords(s string) string {
	f := strings.Fields(s)
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}

// commandLines returns the mcpi commands among lines: a line whose first
// word, after a shell prompt ($), a workflow's `run:` and environment
// assignments, is mcpi. A line ending in a backslash goes on on the next;
// a comment (#) is not part of the command.
func commandLines(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
		}
		l = strings.TrimPrefix(l, "$ ")
		l = strings.TrimPrefix(l, "- run: ")
		l = strings.TrimPrefix(l, "run: ")
		l = strings.Join(strings.Fields(stripComment(l)), " ")
		words := strings.Fields(l)
		for len(words) > 0 && envAssignment.MatchString(words[0]) {
			words = words[1:]
		}
		if len(words) > 0 && words[0] == "mcpi" {
			out = append(out, l)
		}
	}
	return out
}

// envAssignment matches a shell's NAME=VALUE before a command.
var envAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// stripComment cuts a shell comment: a # at the start of a word, outside
// quotes.
func stripComment(s string) string {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return strings.TrimSpace(s[:i])
		}
	}
	return s
}

// shellWords splits a command line as sh would (quotes, backslashes),
// up to its first unquoted pipe, redirection or list operator.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	end := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]):
				i++
				cur.WriteRune(rs[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case r == ' ' || r == '\t':
			end()
		case strings.ContainsRune("|><;&", r):
			end()
			return words, nil
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("an unterminated %c quote", quote)
	}
	end()
	return words, nil
}

// parsesAsMcpi checks a command against mcpi's command tree: the command
// exists, its flags are its flags (with their values' types), and its
// TARGET and arguments are as it takes them (its Args).
func parsesAsMcpi(line string) error {
	words, err := shellWords(line)
	if err != nil {
		return err
	}
	for len(words) > 0 && envAssignment.MatchString(words[0]) {
		// The TARGET is parsed with the command's arguments, and
		// $MCPI_SESSION may be it. TestExamplesRun calls this before its
		// parallel subtests, while no other test of the package runs.
		if name, value, _ := strings.Cut(words[0], "="); name == command.SessionEnv {
			defer os.Unsetenv(command.SessionEnv)
			os.Setenv(command.SessionEnv, value)
		}
		words = words[1:]
	}
	root := NewCmdRoot(&command.Factory{IO: &command.IOStreams{}})
	cmd, rest, err := root.Find(words[1:])
	if err != nil {
		return err
	}
	if cmd == root && len(rest) > 0 {
		return fmt.Errorf("unknown command %q", rest[0])
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if cmd.Runnable() {
		return cmd.ValidateArgs(cmd.Flags().Args())
	}
	return nil
}

// exampleEnv is what the examples run in: the binary on PATH, a home of
// their own, a demo server over HTTP on a loopback port, and an OTLP
// receiver.
type exampleEnv struct {
	bin      string
	home     string
	demoURL  string
	otlpURL  string
	peer     string // this test binary, which serves the project's test servers
	smoke    []byte // the collection docs/test.md shows
	otlp     *mcptest.OTLPReceiver
	fixtures string
}

// exampleDeadline bounds each command.
const exampleDeadline = 90 * time.Second

func newExampleEnv(t *testing.T) *exampleEnv {
	t.Helper()
	bin := mcpiBinary(t)
	env := &exampleEnv{bin: bin, home: t.TempDir(), peer: os.Args[0]}
	env.peer, _ = filepath.Abs(env.peer)
	env.fixtures, _ = filepath.Abs("testdata/examples")
	for _, d := range []string{"project", ".config", ".cache"} {
		if err := os.MkdirAll(filepath.Join(env.home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env.otlp = mcptest.NewOTLPReceiver(t)
	env.otlpURL = env.otlp.URL
	env.demoURL = startDemoHTTP(t, bin)
	b, err := os.ReadFile("../../docs/test.md")
	if err != nil {
		t.Fatal(err)
	}
	env.smoke = namedBlock(string(b), "smoke.yaml")
	if env.smoke == nil {
		t.Fatal("docs/test.md has no block that starts with # smoke.yaml")
	}
	return env
}

// namedBlock returns the fenced block of doc whose first line is a comment
// naming file ("# smoke.yaml: ...").
func namedBlock(doc, file string) []byte {
	parts := strings.Split(doc, "```")
	for i := 1; i < len(parts); i += 2 {
		body := parts[i]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 {
			body = body[nl+1:] // the fence's info string
		}
		if strings.HasPrefix(body, "# "+file+":") || strings.HasPrefix(body, "# "+file+"\n") {
			return []byte(body)
		}
	}
	return nil
}

// startDemoHTTP starts the demo server over Streamable HTTP on a free
// loopback port and returns its endpoint.
func startDemoHTTP(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "demo-server", "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, url, ok := strings.Cut(sc.Text(), "Streamable HTTP at "); ok {
			go io.Copy(io.Discard, stderr)
			return url
		}
	}
	t.Fatalf("demo-server --http said no address: %v", sc.Err())
	return ""
}

// servers are the scripts that stand for the servers the examples name.
func (env *exampleEnv) servers(t *testing.T) map[string]string {
	peer := func(kind string) string {
		return fmt.Sprintf("%s=%s exec %q -test.run='^$' \"$@\"", mcptest.PeerEnv, kind, env.peer)
	}
	return map[string]string{
		"my-server":     `exec mcpi demo-server "$@"`,
		"my-server-v2":  `exec mcpi demo-server "$@"`,
		"server":        `exec mcpi demo-server "$@"`,
		"apps-server":   peer(mcptest.AppsPrefix + mcptest.AppsGood),
		"skills-server": peer(mcptest.SkillsPrefix + mcptest.SkillsHonest),
		"modern-server": peer(mcptest.ModernBrokenPrefix),
		"tasks-server":  peer(mcptest.TasksPeer),
	}
}

// workDir makes a group's working directory: the fixtures, the servers'
// scripts, the collection of docs/test.md as smoke.yaml and under tests/.
func (env *exampleEnv) workDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(env.fixtures)); err != nil {
		t.Fatal(err)
	}
	for name, body := range env.servers(t) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"src", "data"} { // the roots the examples name
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{".", "tests", "tests/mcp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "smoke.yaml"), env.smoke, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// environ is the environment of a group's commands: nothing of the
// caller's but PATH (mcpi first), no display and a browser that opens
// nothing.
func (env *exampleEnv) environ(runtime string) []string {
	return []string{
		"PATH=" + filepath.Dir(env.bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + env.home,
		"XDG_CONFIG_HOME=" + filepath.Join(env.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(env.home, ".cache"),
		"XDG_RUNTIME_DIR=" + runtime,
		"USER=ada",
		"TOKEN=not-a-token",
		"BROWSER=true",
		"NO_COLOR=1",
		"LANG=C.UTF-8",
	}
}

// runGroup runs a group's commands in order in a working directory of its
// own, with a runtime directory (and so sessions) of its own.
func (env *exampleEnv) runGroup(t *testing.T, group []example) {
	dir := env.workDir(t)
	// A socket's path is short: the runtime directory is not t.TempDir().
	runtime, err := os.MkdirTemp("", "mx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runtime) })
	environ := append(env.environ(runtime), "PWD="+dir)
	var sessions []string
	t.Cleanup(func() {
		// A group that failed half-way leaves no daemon behind.
		for _, s := range sessions {
			c := exec.Command(env.bin, "session", "stop", s)
			c.Env = environ
			c.Run()
		}
	})
	var background []backgroundRun
	grabbed := ""
	join := func() {
		for _, b := range background {
			code := b.run.wait()
			switch {
			case b.e.unchecked != "":
				t.Logf("%q: exit %d, not checked: %s", b.e.cmd, code, b.e.unchecked)
			case code != b.e.code:
				t.Errorf("%q (as %q, beside the others): exit %d, want %d:\n%s", b.e.cmd, b.run.text, code, b.e.code, b.run.output())
			}
		}
		background = nil
	}
	for _, e := range group {
		if e.join {
			join()
		}
		text := env.substitute(t, e, grabbed)
		if f := strings.Fields(text); len(f) > 3 && f[1] == "session" && f[2] == "start" {
			sessions = append(sessions, f[3])
		}
		r := startExample(t, dir, environ, text)
		switch {
		case e.bg:
			background = append(background, backgroundRun{r, e})
			if e.grab != "" {
				grabbed = r.grab(t, e)
			}
			continue
		case e.until != "":
			if !r.waitFor(func(s string) bool { return strings.Contains(s, e.until) }) {
				t.Errorf("%q never said %q:\n%s", e.cmd, e.until, r.output())
			}
			syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT)
		}
		code := r.wait()
		if e.tui {
			if code != 2 || !strings.Contains(r.output(), errNoTerminal.Error()) {
				t.Errorf("%q (as %q): exit %d, want 2 at the terminal check:\n%s", e.cmd, text, code, r.output())
			}
			continue
		}
		if code != e.code {
			t.Errorf("%q (as %q): exit %d, want %d:\n%s", e.cmd, text, code, e.code, r.output())
		}
		if e.grab != "" {
			grabbed = r.grab(t, e)
		}
	}
	join()
}

// backgroundRun is a command that runs beside the ones after it.
type backgroundRun struct {
	run *exampleRun
	e   example
}

// grab waits until the command's output matches e.grab (or the command
// has ended) and returns the regular expression's first group.
func (r *exampleRun) grab(t *testing.T, e example) string {
	t.Helper()
	re := regexp.MustCompile(e.grab)
	r.waitFor(re.MatchString)
	m := re.FindStringSubmatch(r.out.String())
	if m == nil {
		t.Fatalf("%q: no %s in its output:\n%s", e.cmd, e.grab, r.output())
	}
	return m[1]
}

// substitute makes the command that runs for e: the shared servers (the
// HTTP demo server, the OTLP receiver, server-everything), then e's own.
func (env *exampleEnv) substitute(t *testing.T, e example, grabbed string) string {
	t.Helper()
	text := e.cmd
	text = strings.ReplaceAll(text, "http://127.0.0.1:8080/mcp", env.demoURL)
	text = strings.ReplaceAll(text, "http://127.0.0.1:4318", env.otlpURL)
	if strings.Contains(text, everythingCmd) && !e.tui {
		text = strings.ReplaceAll(text, everythingCmd, shellQuote(mcptest.Everything(t)))
	}
	for i := 0; i+1 < len(e.sub); i += 2 {
		text = strings.ReplaceAll(text, e.sub[i], e.sub[i+1])
	}
	if strings.Contains(text, exampleTaskID) {
		if grabbed == "" {
			t.Fatalf("%q: no task id was grabbed before it", e.cmd)
		}
		text = strings.ReplaceAll(text, exampleTaskID, grabbed)
	}
	return text
}

// shellQuote quotes words for sh.
func shellQuote(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// exampleRun is one command started by sh in its own process group.
type exampleRun struct {
	text   string
	cmd    *exec.Cmd
	cancel context.CancelFunc
	out    *watchedBuffer
	done   chan struct{}
	code   int
}

func startExample(t *testing.T, dir string, environ []string, text string) *exampleRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), exampleDeadline)
	cmd := exec.CommandContext(ctx, "sh", "-c", text)
	cmd.Dir, cmd.Env = dir, environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	r := &exampleRun{text: text, cmd: cmd, cancel: cancel, out: newWatchedBuffer(), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = r.out, r.out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		r.code = 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			r.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				r.code = 128 + int(ws.Signal())
			}
		case err != nil:
			r.code = -1
		}
		if ctx.Err() != nil {
			r.out.Write(fmt.Appendf(nil, "\n(killed after %s)\n", exampleDeadline))
		}
		cancel()
		close(r.done)
	}()
	return r
}

// wait returns the command's exit code once it has ended.
func (r *exampleRun) wait() int {
	<-r.done
	return r.code
}

// output is what the command wrote (stdout and stderr), its end if long.
func (r *exampleRun) output() string {
	s := r.out.String()
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}

// waitFor waits until the output is as ok wants, or the command has ended.
func (r *exampleRun) waitFor(ok func(string) bool) bool {
	for {
		changed := r.out.changed()
		if ok(r.out.String()) {
			return true
		}
		select {
		case <-changed:
		case <-r.done:
			return ok(r.out.String())
		}
	}
}

// watchedBuffer is a buffer safe for concurrent use whose writes can be
// waited for.
type watchedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	wake chan struct{}
}

func newWatchedBuffer() *watchedBuffer { return &watchedBuffer{wake: make(chan struct{})} }

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.wake)
	w.wake = make(chan struct{})
	return w.buf.Write(p)
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// changed returns a channel closed at the next write.
func (w *watchedBuffer) changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wake
}
