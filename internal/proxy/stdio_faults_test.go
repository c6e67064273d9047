package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// proxied is a host, the proxy and a server of the test binary.
type proxied struct {
	host  *mcptest.Host
	tap   *taps
	eng   *intercept.Engine
	in    io.WriteCloser
	done  chan int
	errOf chan error
}

// startStdio runs RunStdio between a simulated host and the server mode
// of the test binary, with the faults of yaml ("" for none: the proxy of
// today, no engine).
func startStdio(t *testing.T, server, faults string, seed uint64) *proxied {
	return startStdioGate(t, server, faults, seed, nil)
}

// startStdioGate is startStdio with a gate.
func startStdioGate(t *testing.T, server, faults string, seed uint64, gate *intercept.Gate) *proxied {
	t.Helper()
	p := &proxied{tap: &taps{}, done: make(chan int, 1), errOf: make(chan error, 1)}
	if faults != "" {
		fs, err := intercept.ParseFaults([]byte(faults))
		if err != nil {
			t.Fatal(err)
		}
		p.eng = intercept.NewEngine(intercept.Options{Faults: fs, Seed: seed, Tap: p.tap})
	}
	hostIn, proxyOut := io.Pipe()
	proxyIn, hostOut := io.Pipe()
	p.in = hostOut
	p.host = mcptest.NewHost(hostOut, hostIn)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		code, err := RunStdio(ctx, StdioOptions{Command: []string{os.Args[0]}, Env: []string{peerEnv(server)},
			Stdin: proxyIn, Stdout: proxyOut, Stderr: io.Discard, Tap: p.tap, Faults: p.eng, Gate: gate})
		proxyOut.Close()
		p.done <- code
		p.errOf <- err
	}()
	t.Cleanup(func() {
		cancel()
		hostOut.Close()
		<-p.done
	})
	return p
}

// peerEnv runs the test binary as the demo server or the raw one.
func peerEnv(server string) string {
	if server == "raw" || server == "stray" {
		return "MCPI_PROXY_TEST_SERVER=" + server
	}
	return mcptest.PeerEnv + "=" + server
}

// changes are the intercept events' changes.
func (p *proxied) changes(t *testing.T) []intercept.Change {
	t.Helper()
	var out []intercept.Change
	for _, e := range p.tap.of(transport.KindIntercept) {
		var c intercept.Change
		if err := json.Unmarshal(e.Data, &c); err != nil {
			t.Fatalf("intercept event %s: %v", e.Data, err)
		}
		out = append(out, c)
	}
	return out
}

// Without faults the proxy is what it was: every byte the server wrote
// reaches the host as written, odd ones too; with an engine whose rules
// change nothing, the same.
func TestStdioUnchangedWithoutFaults(t *testing.T) {
	want := "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\n  \nnot json\n\xff\xfe\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}"
	for _, faults := range []string{"", "faults:\n  - match: method:never\n    drop: true\n"} {
		p := startStdio(t, "raw", faults, 1)
		p.host.Send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if code := <-p.done; code != 0 {
			t.Fatalf("exit %d", code)
		}
		p.done <- 0
		p.host.Ended(t)
		// The host's reader keeps lines; the last frame had no end of
		// line and is kept all the same.
		if got := string(p.host.Transcript()); got != want {
			t.Errorf("faults %q: the host got %q, want %q", faults, got, want)
		}
	}
}

func TestStdioFaults(t *testing.T) {
	cases := []struct {
		name, faults string
		run          func(t *testing.T, p *proxied)
		action       string
	}{
		{"drop", "faults:\n  - match: method:ping\n    drop: true\n    count: 1\n", func(t *testing.T, p *proxied) {
			p.host.Request(t, "ping", map[string]any{}) // dropped: never answered
			if res := p.host.Call(t, "ping", map[string]any{}); !bytes.Contains(res, []byte(`"id":3`)) {
				t.Errorf("the second ping got %s", res)
			}
			if tr := p.host.Transcript(); bytes.Contains(tr, []byte(`"id":2`)) {
				t.Errorf("the dropped ping was answered: %s", tr)
			}
		}, "drop"},
		{"error", "faults:\n  - match: tool:add\n    error: {code: -32000, message: quota exceeded}\n", func(t *testing.T, p *proxied) {
			res := p.host.Call(t, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}})
			if string(res) != `{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"quota exceeded"}}` {
				t.Errorf("the call got %s", res)
			}
		}, "error"},
		{"delay", "faults:\n  - match: dir:in method:tools/list\n    delay: {min: 1ms, max: 20ms}\n", func(t *testing.T, p *proxied) {
			if res := p.host.Call(t, "tools/list", map[string]any{}); !bytes.Contains(res, []byte(`"echo"`)) {
				t.Errorf("tools/list got %s", res)
			}
		}, "delay"},
		{"duplicate", "faults:\n  - match: dir:in id:2\n    duplicate: 3\n", func(t *testing.T, p *proxied) {
			first := p.host.Call(t, "ping", map[string]any{})
			for range 2 {
				if again, _ := p.host.Recv(t); !bytes.Equal(again, first) {
					t.Errorf("a copy %s, want %s", again, first)
				}
			}
		}, "duplicate"},
		{"reorder", "faults:\n  - match: dir:in id:2\n    reorder: 1\n", func(t *testing.T, p *proxied) {
			p.host.Request(t, "ping", map[string]any{})
			p.host.Request(t, "ping", map[string]any{})
			a, _ := p.host.Recv(t)
			b, _ := p.host.Recv(t)
			if !bytes.Contains(a, []byte(`"id":3`)) || !bytes.Contains(b, []byte(`"id":2`)) {
				t.Errorf("got %s then %s, want the answer to 3 first", a, b)
			}
		}, "reorder"},
		{"slow", "faults:\n  - match: dir:in id:2\n    slow: 100000\n", func(t *testing.T, p *proxied) {
			if res := p.host.Call(t, "ping", map[string]any{}); string(res) != `{"jsonrpc":"2.0","id":2,"result":{}}` {
				t.Errorf("ping got %s", res)
			}
		}, "slow"},
		{"corrupt id", "faults:\n  - match: dir:in id:2\n    corrupt: id\n", func(t *testing.T, p *proxied) {
			p.host.Request(t, "ping", map[string]any{})
			if line, _ := p.host.Recv(t); string(line) != `{"id":1000002,"jsonrpc":"2.0","result":{}}` {
				t.Errorf("got %s", line)
			}
		}, "corrupt"},
		{"corrupt utf8", "faults:\n  - match: dir:in id:2\n    corrupt: utf8\n", func(t *testing.T, p *proxied) {
			p.host.Request(t, "ping", map[string]any{})
			if line, _ := p.host.Recv(t); string(line) != "{\"\xff\xfejsonrpc\":\"2.0\",\"id\":2,\"result\":{}}" {
				t.Errorf("got %q", line)
			}
		}, "corrupt"},
		{"corrupt cut", "faults:\n  - match: dir:in id:2\n    corrupt: cut\n", func(t *testing.T, p *proxied) {
			p.host.Request(t, "ping", map[string]any{})
			if line, _ := p.host.Recv(t); string(line) != `{"jsonrpc":"2.0","id":2,"result":{}}`[:18] {
				t.Errorf("got %q", line)
			}
			// The connection goes on.
			if res := p.host.Call(t, "ping", map[string]any{}); !bytes.Contains(res, []byte(`"id":3`)) {
				t.Errorf("the next ping got %s", res)
			}
		}, "corrupt"},
		{"corrupt json", "faults:\n  - match: dir:in id:2\n    corrupt: json\n", func(t *testing.T, p *proxied) {
			p.host.Request(t, "ping", map[string]any{})
			if line, _ := p.host.Recv(t); json.Valid(line) {
				t.Errorf("got valid JSON %s", line)
			}
		}, "corrupt"},
		{"close after", "faults:\n  - match: method:ping dir:out\n    close: {after: 2}\n", func(t *testing.T, p *proxied) {
			p.host.Call(t, "ping", map[string]any{})
			p.host.Request(t, "ping", map[string]any{})
			p.host.Ended(t)
			if tr := p.host.Transcript(); bytes.Contains(tr, []byte(`"id":3`)) {
				t.Errorf("the ping after the close was answered: %s", tr)
			}
		}, "close"},
		{"cut", "faults:\n  - match: dir:in id:2\n    cut: true\n", func(t *testing.T, p *proxied) {
			p.host.Request(t, "ping", map[string]any{})
			p.host.Ended(t)
			if tr := string(p.host.Transcript()); !strings.HasSuffix(tr, `{"jsonrpc":"2.0","id":2,"resu`[:len(`{"jsonrpc":"2.0","id":2,"result":{}}`)/2]) {
				t.Errorf("the host got %q, want half the answer last", tr)
			}
		}, "cut"},
		{"status never on stdio", "faults:\n  - status: 503\n", func(t *testing.T, p *proxied) {
			p.host.Call(t, "ping", map[string]any{})
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := startStdio(t, "demo", c.faults, 1)
			p.host.Initialize(t)
			c.run(t, p)
			ch := p.changes(t)
			if c.action == "" {
				if len(ch) != 0 {
					t.Errorf("changes %+v, want none", ch)
				}
				return
			}
			if len(ch) == 0 || ch[0].Action != c.action || ch[0].Original == nil || ch[0].Note == "" {
				t.Fatalf("changes %+v, want a %s", ch, c.action)
			}
		})
	}
}

// The same seed gives the same run, byte for byte; another seed another.
func TestStdioSeedRepeats(t *testing.T) {
	faults := "faults:\n  - match: dir:in method:ping\n    probability: 0.5\n    corrupt: id\n"
	run := func(seed uint64) string {
		p := startStdio(t, "demo", faults, seed)
		p.host.Initialize(t)
		for range 20 {
			p.host.Request(t, "ping", map[string]any{})
			p.host.Recv(t)
		}
		return string(p.host.Transcript())
	}
	a, b, c := run(7), run(7), run(8)
	if a != b {
		t.Errorf("seed 7 twice gave two runs:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 gave the same run")
	}
	if !strings.Contains(a, "1000") {
		t.Errorf("no frame was corrupted: %s", a)
	}
}

// A server that answers requests the proxy kept from it: its answer to
// the one the proxy answered in its place is withheld (the host has one
// answer for each id), to the dropped one forwarded; both are said.
func TestStdioStrayAnswers(t *testing.T) {
	p := startStdio(t, "stray", "faults:\n  - match: id:1 dir:out\n    error: {code: -32001, message: busy}\n  - match: id:2 dir:out\n    drop: true\n", 1)
	p.host.Send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	p.host.Send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	p.host.Send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	var got []string
	for range 3 {
		line, ok := p.host.Recv(t)
		if !ok {
			t.Fatalf("the connection ended after %q", got)
		}
		got = append(got, string(line))
	}
	want := []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"busy"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"from":"server"}}`, `{"jsonrpc":"2.0","id":3,"result":{"from":"server"}}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the host got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	p.in.Close()
	p.host.Ended(t)
	if tr := p.host.Transcript(); bytes.Count(tr, []byte(`"id":1,`)) != 1 {
		t.Errorf("the host got two answers for id 1: %s", tr)
	}
	checkStrays(t, p.changes(t))
}
