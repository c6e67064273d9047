package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestAnswersAreTakenNotWaitedFor: a malformed answer that arrived is
// taken or fails the command at once, over stdio and HTTP; never a
// timeout.
func TestAnswersAreTakenNotWaitedFor(t *testing.T) {
	t.Parallel()
	g := func(mode string) []string {
		return with(peerArgs(mcptest.GarbledPrefix+mode), "--era", "legacy", "--timeout", "30s")
	}
	// An HTTP server whose answer to tools/list is cut short.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		switch {
		case req.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case req.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"cut","version":"1"}}}`, req.ID)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","result":{"tools":[{"name":"a"`)
		}
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []cliCase{
		{name: "bom", args: with(g("bom"), "call", "echo"), stdout: []string{"ok"}, stderr: []string{"byte order mark"}},
		{name: "bad utf-8", args: with(g("bad-utf8"), "call", "echo"), stdout: []string{"caf\ufffd au lait"}, stderr: []string{`\xe9`}},
		{name: "result and error", args: with(g("result-and-error"), "call", "echo"), code: ExitProtocol, stderr: []string{"both result and error", "server error: both"}},
		{name: "not json", args: with(g("not-json"), "call", "echo"), code: ExitProtocol, stderr: []string{"could not be read", "unterminated"}},
		{name: "not json --json", args: with(g("not-json"), "call", "echo", "--json"), code: ExitProtocol, jsonStdout: true, stdout: []string{`"exitCode":4`}},
		{name: "http answer cut short", args: []string{"tools", "--transport", "http", "--era", "legacy", "--timeout", "30s", srv.URL}, code: ExitProtocol, stderr: []string{"could not be read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			checkCase(t, tc)
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %v: the command waited for an answer that had come", d)
			}
		})
	}
}
