package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LoadPrefix names, in PeerEnv, a stdio server that tries mcpi bench:
// "load:MODE" or "load:MODE:K".
const LoadPrefix = "load:"

// Load modes. Each serves one tool, "t", and counts its calls in the
// order they arrive (the n-th call is call n, from 1).
const (
	// LoadMixed answers call n with a JSON-RPC error -32603 when n is a
	// multiple of 10, else with isError when n is a multiple of 7, else
	// with a text.
	LoadMixed = "mixed"
	// LoadOutOfOrder holds the calls it reads in a batch of up to 16 (or
	// what arrived within 2 ms) and answers the batch last first.
	LoadOutOfOrder = "out-of-order"
	// LoadFlood sends 50 notifications/message and 50 notifications/progress
	// (to a token nobody asked for) before each answer.
	LoadFlood = "flood"
	// LoadStops answers the first K calls, then reads and never answers.
	LoadStops = "stops"
	// LoadExits answers the first K calls, then exits.
	LoadExits = "exits"
	// LoadTraceParent answers each call with the traceparent of its
	// params._meta ("none" without one): what a server that joins the
	// client's trace reads.
	LoadTraceParent = "traceparent"
	// LoadTraced does what LoadTraceParent does and, as a server that
	// joins its client's trace, exports a span of its own for each call,
	// a child of the traceparent, to the OTLP/HTTP receiver named by
	// TracedServerEnv.
	LoadTraced = "traced"
)

// TracedServerEnv names the OTLP/HTTP receiver a LoadTraced server sends
// its spans to.
const TracedServerEnv = "MCPI_TEST_SERVER_OTLP"

// RunLoad serves one load mode on stdin and stdout; on stdin's end it
// writes "calls N" on stderr.
func RunLoad(spec string) {
	mode, ks, _ := strings.Cut(spec, ":")
	k, _ := strconv.Atoi(ks)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	var wmu sync.Mutex
	send := func(frames ...string) {
		wmu.Lock()
		defer wmu.Unlock()
		for _, f := range frames {
			out.WriteString(f)
			out.WriteByte('\n')
		}
		out.Flush()
	}
	answer := func(id json.RawMessage, n int) string {
		switch {
		case mode == LoadMixed && n%10 == 0:
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"call %d failed"}}`, id, n)
		case mode == LoadMixed && n%7 == 0:
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"tool failed on call %d"}],"isError":true}}`, id, n)
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"call %d"}]}}`, id, n)
	}
	// The out-of-order batch: calls read but not answered yet.
	var bmu sync.Mutex
	var batch []string
	flush := func() {
		bmu.Lock()
		b := batch
		batch = nil
		bmu.Unlock()
		for i := len(b) - 1; i >= 0; i-- {
			send(b[i])
		}
	}
	if mode == LoadOutOfOrder {
		go func() {
			for {
				time.Sleep(2 * time.Millisecond)
				flush()
			}
		}()
	}
	calls := 0
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	defer func() { fmt.Fprintf(os.Stderr, "calls %d\n", calls) }()
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return
			}
			continue
		}
		var m hostileMsg
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 || m.Method == "" {
			continue
		}
		switch m.Method {
		case "initialize":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"load-%s","version":"1"}}}`, m.ID, mode))
		case "tools/list":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`, m.ID))
		case "tools/call":
			calls++
			n := calls
			switch mode {
			case LoadStops:
				if n > k {
					continue
				}
			case LoadExits:
				if n > k {
					fmt.Fprintf(os.Stderr, "calls %d\n", n-1)
					os.Exit(3)
				}
			case LoadFlood:
				frames := make([]string, 0, 101)
				for i := range 50 {
					frames = append(frames,
						fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood %d.%d"}}`, n, i),
						fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nobody-%d","progress":%d}}`, n, i))
				}
				send(append(frames, answer(m.ID, n))...)
				continue
			case LoadTraceParent, LoadTraced:
				var p struct {
					Meta struct {
						TraceParent string `json:"traceparent"`
					} `json:"_meta"`
				}
				json.Unmarshal(m.Params, &p)
				tp := p.Meta.TraceParent
				if mode == LoadTraced {
					if err := exportServerSpan(tp); err != nil {
						fmt.Fprintf(os.Stderr, "exporting the server's span: %v\n", err)
					}
				}
				if tp == "" {
					tp = "none"
				}
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, m.ID, tp))
				continue
			case LoadOutOfOrder:
				bmu.Lock()
				batch = append(batch, answer(m.ID, n))
				full := len(batch) >= 16
				bmu.Unlock()
				if full {
					flush()
				}
				continue
			}
			send(answer(m.ID, n))
		case "ping":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID))
		default:
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no method"}}`, m.ID))
		}
	}
}
