package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

func hostile(mode string) string { return "hostile:" + mode }

func TestGarbageBeforeFirstFrame(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileGarbageFirst), peerConfig{}))
	r, err := p.c.CallTool(ctxT(t), "echo", nil, nil)
	if err != nil || textOf(r) != "ok" {
		t.Fatalf("call after garbage: %v", err)
	}
	bad := p.rec.kinds(transport.KindBadFrame)
	if len(bad) != 3 {
		t.Fatalf("got %d bad frames, want 3: %+v", len(bad), bad)
	}
	if !strings.Contains(bad[1].Err, "UTF-8") {
		t.Errorf("second bad frame: %q, want a UTF-8 complaint", bad[1].Err)
	}
	p.rec.mu.Lock()
	defer p.rec.mu.Unlock()
	if len(p.rec.warnings) != 3 || !strings.Contains(string(p.rec.warnings[0].Data), "Starting server") {
		t.Errorf("warnings should quote what arrived: %+v", p.rec.warnings)
	}
}

func TestHugeSingleLineResult(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileHuge), peerConfig{}))
	r, err := p.c.CallTool(ctxT(t), "echo", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(textOf(r)); n != mcptest.HugeSize {
		t.Fatalf("got %d bytes of text, want %d", n, mcptest.HugeSize)
	}
	// The connection goes on.
	if err := p.c.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

func TestCrashMidCall(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileCrash), peerConfig{}))
	// A clock of its own: a call that waited for the dead server would
	// end on it, and fail the test by its error, not by its time.
	_, err := p.c.CallTool(ctxT(t), "echo", nil, &session.CallOptions{Timeout: 10 * time.Second})
	if !errors.Is(err, session.ErrDisconnected) {
		t.Fatalf("want a disconnection, got %v", err)
	}
	var exit *transport.ServerExitError
	if !errors.As(err, &exit) || exit.ExitCode != 3 {
		t.Fatalf("want exit status 3, got %v", err)
	}
	if !strings.Contains(err.Error(), "panic: something broke") {
		t.Errorf("error should carry the stderr tail: %v", err)
	}
	// Later calls fail at once too.
	if err := p.c.Ping(ctxT(t)); !errors.Is(err, session.ErrDisconnected) {
		t.Errorf("ping after crash: %v", err)
	}
}

func TestHangTimesOutAndCancels(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileHang), peerConfig{}))
	_, err := p.c.CallTool(ctxT(t), "echo", nil, &session.CallOptions{Timeout: 200 * time.Millisecond})
	var te *session.TimeoutError
	if !errors.Is(err, session.ErrTimeout) || !errors.As(err, &te) || te.Method != "tools/call" {
		t.Fatalf("want a timeout, got %v", err)
	}
	// notifications/cancelled reaches the server, which says so on stderr.
	// (Request 1 was the era probe, 2 initialize, 3 the call.)
	p.rec.waitFor(t, "the server to see notifications/cancelled", func() bool {
		for _, e := range p.rec.events {
			if e.Kind == transport.KindStderr && strings.Contains(string(e.Data), "got notifications/cancelled") {
				return true
			}
		}
		return false
	})
	c := p.rec.sent("notifications/cancelled")
	if len(c) != 1 || !strings.Contains(string(c[0].Params), `"requestId":3`) {
		t.Errorf("cancelled: %+v", c)
	}
	// The server answers the cancelled call after all: the spec allows the
	// race, so the answer is ignored, not reported as the server's mistake.
	p.rec.waitFor(t, "the late answer", func() bool {
		for _, e := range p.rec.events {
			if e.Kind == transport.KindFrame && e.Dir == transport.Incoming && strings.Contains(string(e.Data), "too late") {
				return true
			}
		}
		return false
	})
	if err := p.c.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	p.rec.mu.Lock()
	defer p.rec.mu.Unlock()
	for _, w := range p.rec.warnings {
		t.Errorf("warning about the late answer: %+v", w)
	}
}

func TestNotificationFlood(t *testing.T) {
	t.Parallel()
	var got int
	done := make(chan struct{})
	cfg := peerConfig{opts: session.Options{OnNotification: nil}}
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileFlood), cfg))
	go func() {
		defer close(done)
		r, err := p.c.CallTool(ctxT(t), "echo", nil, nil)
		if err != nil || textOf(r) != "ok" {
			t.Errorf("call after flood: %v", err)
		}
	}()
	<-done
	p.rec.waitFor(t, "every notification", func() bool {
		got = countMethod(p.rec.notifs, "notifications/message")
		return got == 100000
	})
}

func TestInvalidUTF8Frame(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileBadUTF8), peerConfig{}))
	p.rec.waitFor(t, "a bad-frame warning", func() bool { return len(p.rec.warnings) > 0 })
	p.rec.mu.Lock()
	w := p.rec.warnings[0]
	p.rec.mu.Unlock()
	if w.Kind != "bad-frame" || !strings.Contains(w.Message, "UTF-8") {
		t.Errorf("warning %+v", w)
	}
	if _, err := p.c.CallTool(ctxT(t), "echo", nil, nil); err != nil {
		t.Errorf("the connection should go on: %v", err)
	}
}

func TestOldRevisionAccepted(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileOldVersion), peerConfig{}))
	if v := p.c.ProtocolVersion(); v != mcp.Rev20241105 {
		t.Fatalf("revision %s", v)
	}
	// A 2025-11-25 method is refused before it is sent.
	_, err := p.c.ListTasks(ctxT(t), "")
	if !errors.Is(err, session.ErrVersion) {
		t.Errorf("tasks/list on 2024-11-05: %v", err)
	}
	if _, err := p.c.CallTool(ctxT(t), "echo", nil, nil); err != nil {
		t.Error(err)
	}
}

func TestUnknownRevisionRefused(t *testing.T) {
	t.Parallel()
	_, err := stdioPeer(t, hostile(mcptest.HostileUnknownVersion), peerConfig{noSchema: true})
	var ve *session.VersionError
	if !errors.As(err, &ve) || ve.Got != "2099-01-01" {
		t.Fatalf("want a version error, got %v", err)
	}
	if !strings.Contains(err.Error(), "2099-01-01") || !strings.Contains(err.Error(), mcp.LatestLegacy) {
		t.Errorf("message should name both revisions: %v", err)
	}
}

func TestStringIDsFromServer(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileStringIDs), peerConfig{}))
	if _, err := p.c.CallTool(ctxT(t), "echo", nil, nil); err != nil {
		t.Fatal(err)
	}
	p.rec.mu.Lock()
	defer p.rec.mu.Unlock()
	found := false
	for _, w := range p.rec.warnings {
		found = found || w.Kind == "id-type"
	}
	if !found {
		t.Errorf("no id-type warning: %+v", p.rec.warnings)
	}
}

func TestBatchFrom20250326(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileBatch), peerConfig{}))
	if v := p.c.ProtocolVersion(); v != mcp.Rev20250326 {
		t.Fatalf("revision %s", v)
	}
	tools, err := p.c.AllTools(ctxT(t))
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools from a batch: %v %v", err, tools)
	}
	p.rec.waitFor(t, "the batched notification", func() bool { return countMethod(p.rec.notifs, "notifications/message") == 1 })
	p.rec.mu.Lock()
	defer p.rec.mu.Unlock()
	if len(p.rec.warnings) != 0 {
		t.Errorf("a batch is fine on 2025-03-26: %+v", p.rec.warnings)
	}
}

func TestResponseToUnknownID(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileUnknownID), peerConfig{}))
	p.rec.waitFor(t, "an unknown-id warning", func() bool {
		for _, w := range p.rec.warnings {
			if w.Kind == "unknown-id" && strings.Contains(w.Message, "9999") {
				return true
			}
		}
		return false
	})
	if err := p.c.Ping(ctxT(t)); err != nil {
		t.Error(err)
	}
}

func TestServerRequestsWithMixedIDs(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileServerRequests), peerConfig{}))
	r, err := p.c.CallTool(ctxT(t), "echo", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var answers map[string]json.RawMessage
	if err := json.Unmarshal([]byte(textOf(r)), &answers); err != nil {
		t.Fatalf("%v: %s", err, textOf(r))
	}
	for method, want := range map[string]string{
		"roots/list":             `"id":1000,"result":{"roots":[{"uri":"file:///tmp/project"`,
		"sampling/createMessage": `"id":"req-1001","result":{"role":"assistant"`,
		"elicitation/create":     `"id":1002,"result":{"action":"accept","content":{"name":"Ada"}}`,
	} {
		var line string
		json.Unmarshal(answers[method], &line)
		if !strings.Contains(string(answers[method]), want) {
			t.Errorf("%s answered %s, want it to contain %s", method, answers[method], want)
		}
	}
}

func TestNoHandlerDeclinesServerRequests(t *testing.T) {
	t.Parallel()
	cfg := peerConfig{opts: session.Options{Handler: session.DeclineHandler{Reason: "not interactive"}}}
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileServerRequests), cfg))
	r, err := p.c.CallTool(ctxT(t), "echo", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(textOf(r), "not interactive") {
		t.Errorf("sampling should be declined with the reason: %s", textOf(r))
	}
}

func TestSilentServerTimesOut(t *testing.T) {
	t.Parallel()
	cfg := peerConfig{opts: session.Options{Timeout: 300 * time.Millisecond}, noSchema: true}
	_, err := stdioPeer(t, hostile(mcptest.HostileSilent), cfg)
	if !errors.Is(err, session.ErrTimeout) {
		t.Fatalf("want a timeout on initialize, got %v", err)
	}
}

func TestServerExitsBeforeInitialize(t *testing.T) {
	t.Parallel()
	_, err := stdioPeer(t, hostile(mcptest.HostileStderrExit), peerConfig{noSchema: true})
	var exit *transport.ServerExitError
	if !errors.As(err, &exit) || exit.ExitCode != 7 || !strings.Contains(err.Error(), "config file not found") {
		t.Fatalf("want exit 7 with the stderr tail, got %v", err)
	}
}

func TestCloseUnblocksEverything(t *testing.T) {
	t.Parallel()
	p := mustPeer(t)(stdioPeer(t, hostile(mcptest.HostileHang), peerConfig{}))
	errc := make(chan error, 1)
	go func() {
		_, err := p.c.CallTool(context.Background(), "echo", nil, &session.CallOptions{Timeout: -1})
		errc <- err
	}()
	p.rec.waitFor(t, "the call to be sent", func() bool { return countSent(p.rec, "tools/call", "") > 0 })
	p.c.Close()
	p.c.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, session.ErrDisconnected) {
			t.Errorf("pending call after Close: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not unblock the pending call")
	}
}
