package record_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/otlp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/record/redacttest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// TestTraceAndOTLPShowNoSecret feeds every spelling of every secret to a
// trace's events (a request's arguments, a result, an error, stderr, a
// spawned command line): neither the trace, nor the events a live OTLP
// export reads, nor the OTLP file export holds one.
func TestTraceAndOTLPShowNoSecret(t *testing.T) {
	var texts []string
	for _, s := range redacttest.Secrets {
		texts = append(texts, redacttest.Spellings(s)...)
	}
	var buf bytes.Buffer
	var live []record.Event
	w := record.NewWriter(&buf, record.Header{Mcpi: "test", Target: record.Target{Command: []string{"server"}, Transport: record.TransportStdio}},
		record.Options{SecretValues: redacttest.Secrets, Events: func(e record.Event) { live = append(live, e) }})
	w.Observe(transport.Event{Kind: transport.KindLifecycle, Text: record.SpawnPrefix + "1: server " + strconv.Quote("--x="+strings.Join(texts, " "))})
	for i, text := range texts {
		id := strconv.Itoa(i + 1)
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": map[string]any{"name": "echo", "arguments": map[string]string{"text": text}}})
		res, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "result": map[string]any{"content": []map[string]string{{"type": "text", "text": "got " + text}}, "isError": true}})
		if i%2 == 1 {
			res, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "error": map[string]any{"code": -32000, "message": "failed: " + text}})
		}
		w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Outgoing, Data: req})
		w.Observe(transport.Event{Kind: transport.KindFrame, Dir: transport.Incoming, Data: res})
		w.Observe(transport.Event{Kind: transport.KindStderr, Data: []byte("stderr " + id + " " + text)})
		w.Observe(transport.Event{Kind: transport.KindLifecycle, Text: "note", Err: "failed: " + text})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	trace := buf.String()
	liveJSON, _ := json.Marshal(live)
	r, err := record.NewReader(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	td, _, err := otlp.FromTrace(r, "test")
	if err != nil {
		t.Fatal(err)
	}
	file, err := otlp.JSON(td)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"trace": trace, "live OTLP events": string(liveJSON), "OTLP file": string(file)} {
		if !strings.Contains(out, record.Redacted) {
			t.Errorf("%s: no %s", name, record.Redacted)
		}
		for _, s := range redacttest.Secrets {
			for _, leak := range redacttest.Leaks(s) {
				if strings.Contains(out, leak) {
					t.Errorf("%s holds %q (of %q)", name, leak, s)
				}
			}
		}
	}
}
