package perf

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
)

// Server modes of ServeStdio.
const (
	// ModeDemo is the demo server (the official Go SDK), both eras.
	ModeDemo = "demo"
	// ModeDemoLegacy is the demo server restricted to the legacy era.
	ModeDemoLegacy = "demo-legacy"
	// ModeFlood answers each tools/call after FloodCount notifications/message.
	ModeFlood = "flood"
	// ModeHuge answers each tools/call with a HugeSize text on one line.
	ModeHuge = "huge"
	// ModeFast answers each tools/call with "ok" at once, written with the
	// answers to the other requests it has read (one write a batch): a
	// server that is not the bottleneck of a load generator.
	ModeFast = "fast"
)

// FloodCount is how many notifications ModeFlood sends before each answer.
const FloodCount = 100_000

// HugeSize is the length of the text in ModeHuge's answer.
const HugeSize = 50 << 20

// PeerEnv, set to a mode, turns a re-executed test binary into a server.
const PeerEnv = "MCPI_BENCH_PEER"

// ServeStdio serves mode on stdin and stdout until stdin ends.
//
// The flood and huge servers are the hostile servers of internal/mcptest
// made cheap: their output is built once and written with a few writes, so
// that what a benchmark measures is the client reading it, not the server
// formatting it. They speak the legacy era only (server/discover is an
// unknown method), like the hostile servers.
func ServeStdio(mode string) error {
	switch mode {
	case ModeDemo:
		return demoserver.RunStdio(context.Background(), demoserver.Options{Era: demoserver.EraBoth})
	case ModeDemoLegacy:
		return demoserver.RunStdio(context.Background(), demoserver.Options{Era: demoserver.EraLegacy})
	case ModeFlood, ModeHuge, ModeFast:
		return serveRaw(mode, os.Stdin, os.Stdout)
	}
	return fmt.Errorf("unknown server mode %q (want %s, %s, %s, %s or %s)", mode, ModeDemo, ModeDemoLegacy, ModeFlood, ModeHuge, ModeFast)
}

var (
	floodOnce  sync.Once
	floodBytes []byte
	hugeOnce   sync.Once
	hugeText   []byte // the text and the end of the frame
)

func flood() []byte {
	floodOnce.Do(func() {
		var b bytes.Buffer
		b.Grow(FloodCount * 110)
		for i := range FloodCount {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"flood %d"}}`+"\n", i)
		}
		floodBytes = b.Bytes()
	})
	return floodBytes
}

func huge() []byte {
	hugeOnce.Do(func() {
		b := bytes.Repeat([]byte{'x'}, HugeSize+len(`"}]}}`+"\n"))
		copy(b[HugeSize:], `"}]}}`+"\n")
		hugeText = b
	})
	return hugeText
}

type rawMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"params"`
}

// serveRaw is a hand-written legacy-era server for the flood, huge and
// fast modes.
func serveRaw(mode string, stdin io.Reader, stdout io.Writer) error {
	out := bufio.NewWriterSize(stdout, 64<<10)
	in := bufio.NewReaderSize(stdin, 64<<10)
	reply := func(id json.RawMessage, result string) {
		out.WriteString(`{"jsonrpc":"2.0","id":`)
		out.Write(id)
		out.WriteString(`,"result":`)
		out.WriteString(result)
		out.WriteString("}\n")
	}
	for {
		line, err := in.ReadBytes('\n')
		var m rawMsg
		if len(bytes.TrimSpace(line)) > 0 && json.Unmarshal(line, &m) == nil && len(m.ID) > 0 {
			switch m.Method {
			case "initialize":
				v := m.Params.ProtocolVersion
				switch v {
				case "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25":
				default:
					v = "2025-11-25"
				}
				reply(m.ID, `{"protocolVersion":`+strconv.Quote(v)+`,"capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"bench-`+mode+`","version":"1.0"}}`)
			case "ping", "logging/setLevel":
				reply(m.ID, `{}`)
			case "tools/list":
				reply(m.ID, `{"tools":[{"name":"echo","description":"Answers ok","inputSchema":{"type":"object"}}]}`)
			case "tools/call":
				switch mode {
				case ModeFlood:
					out.Write(flood())
					reply(m.ID, `{"content":[{"type":"text","text":"ok"}]}`)
				case ModeFast:
					reply(m.ID, `{"content":[{"type":"text","text":"ok"}]}`)
				case ModeHuge:
					out.WriteString(`{"jsonrpc":"2.0","id":`)
					out.Write(m.ID)
					out.WriteString(`,"result":{"content":[{"type":"text","text":"`)
					out.Write(huge())
				}
			default:
				out.WriteString(`{"jsonrpc":"2.0","id":`)
				out.Write(m.ID)
				out.WriteString(`,"error":{"code":-32601,"message":"method not found"}}` + "\n")
			}
			if mode == ModeFast && in.Buffered() > 0 {
				continue // more requests read: answer them in one write
			}
			if ferr := out.Flush(); ferr != nil {
				return ferr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
