package timeline

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/daemon"
)

// TestTailText: each kind of event is one sanitised line.
func TestTailText(t *testing.T) {
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		e    daemon.TailEvent
		want string
	}{
		{daemon.TailEvent{Time: at, Kind: "notification", Method: "notifications/tasks", Params: json.RawMessage(`{"taskId":"t1","status":"working","statusMessage":"step 2\u001b[31m of 5"}`)},
			`10:00:00.000 task t1: working — step 2\e[31m of 5`},
		{daemon.TailEvent{Time: at, Kind: "notification", Method: "notifications/tasks/status", Params: json.RawMessage(`{"taskId":"t2","status":"completed"}`)},
			"10:00:00.000 task t2: completed"},
		{daemon.TailEvent{Time: at, Kind: "notification", Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":3,"progress":1,"total":2,"message":"half"}`)},
			"10:00:00.000 progress 3 1/2 half"},
		{daemon.TailEvent{Time: at, Kind: "notification", Method: "notifications/message", Params: json.RawMessage(`{"level":"error","logger":"db","data":"down"}`)},
			"10:00:00.000 log error [db] down"},
		{daemon.TailEvent{Time: at, Kind: "frame", Dir: "recv", Frame: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
			`10:00:00.000 ← {"jsonrpc":"2.0","id":1,"result":{}}`},
		{daemon.TailEvent{Time: at, Kind: "request", Method: "elicitation/create", Request: 5, State: daemon.ParkedWaiting, Command: "call elicit", Summary: "who\x1b[31m?"},
			`10:00:00.000 request #5 elicitation/create waiting for: call elicit: who\e[31m?`},
		{daemon.TailEvent{Time: at, Kind: "request", Method: "elicitation/create", Request: 5, State: daemon.ParkedAnswered},
			`10:00:00.000 request #5 elicitation/create answered`},
	} {
		if got := TailText(c.e); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.e.Method, got, c.want)
		}
	}
}
