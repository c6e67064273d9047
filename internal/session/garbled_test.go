package session_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// TestMalformedButAddressable: an answer that arrived is matched to its
// request whatever else is wrong with it, or fails the request at once;
// never a wait for the timeout.
func TestMalformedButAddressable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode    string
		text    string // the tool's text, when the call succeeds
		err     error  // the error, when it fails
		rpcCode int    // the JSON-RPC error, when the server's is taken
		warning string
	}{
		{mode: "bom", text: "ok", warning: "byte order mark"},
		{mode: "crlf", text: "ok"},
		{mode: "bad-utf8", text: "caf\ufffd au lait", warning: "invalid UTF-8 was replaced with U+FFFD"},
		{mode: "result-and-error", rpcCode: -32603, warning: "both result and error"},
		{mode: "not-json", err: session.ErrMalformed, warning: "not JSON"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			p := mustPeer(t)(stdioPeer(t, mcptest.GarbledPrefix+tc.mode, peerConfig{noSchema: true,
				opts: session.Options{Era: session.EraLegacy, Timeout: 20 * time.Second}}))
			// A call that waited instead of taking the answer would end on
			// its 20 s clock: a timeout error, which no case wants.
			res, err := p.c.CallTool(ctxT(t), "echo", json.RawMessage(`{}`), nil)
			switch {
			case tc.rpcCode != 0:
				var re *session.RPCError
				if !errors.As(err, &re) || re.Code != tc.rpcCode {
					t.Errorf("err = %v, want the error member (%d), deterministically", err, tc.rpcCode)
				}
			case tc.err != nil:
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), "unterminated") {
					t.Errorf("err = %v, want %v naming the frame", err, tc.err)
				}
			case err != nil:
				t.Fatalf("call: %v", err)
			case textOf(res) != tc.text:
				t.Errorf("text %q, want %q", textOf(res), tc.text)
			}
			if tc.warning == "" {
				return
			}
			p.rec.waitFor(t, "the warning", func() bool { // called with p.rec.mu held
				for _, w := range p.rec.warnings {
					if strings.Contains(w.Message, tc.warning) {
						return true
					}
				}
				return false
			})
		})
	}
}
