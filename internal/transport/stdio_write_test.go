//go:build unix

package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStdioQueuedFramesGoOutTogether: frames sent while another write is
// under way wait, and go out together in one write once the pipe takes
// them; a waiting frame whose sender gives up is withdrawn, never written.
func TestStdioQueuedFramesGoOutTogether(t *testing.T) {
	rec := newRecorder()
	s := spawnHelper(t, "gated", StdioOptions{Tap: rec})
	recvData(t, s) // ready, and reading nothing

	big := fmt.Appendf(nil, `{"id":0,"pad":%q}`, strings.Repeat("p", 1<<20))
	bigDone := make(chan error, 1)
	go func() { bigDone <- s.Send(context.Background(), big) }()
	// Its write began (the tap heard of it) and cannot end: the pipe
	// holds far less, and the server reads nothing yet.
	rec.waitFor(t, "the big frame's write", func(e Event) bool { return e.Kind == KindFrame && e.Dir == Outgoing })

	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- s.Send(context.Background(), fmt.Appendf(nil, `{"id":%d}`, i+1)) }()
	}
	wctx, withdraw := context.WithCancel(context.Background())
	withdrawn := make(chan error, 1)
	go func() { withdrawn <- s.Send(wctx, []byte(`{"id":"withdrawn"}`)) }()
	waitQueued(t, s, n+1)
	withdraw()
	if err := wait(t, "the withdrawn frame's Send", withdrawn); !errors.Is(err, context.Canceled) {
		t.Fatalf("Send of a frame withdrawn from the queue = %v, want context.Canceled", err)
	}

	before := s.wbatches.Load()
	if err := syscall.Kill(s.Pid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, "the big frame's Send", bigDone); err != nil {
		t.Fatalf("Send of the big frame: %v", err)
	}
	for range n {
		if err := wait(t, "a queued frame's Send", errs); err != nil {
			t.Fatalf("Send of a queued frame: %v", err)
		}
	}
	if got := s.wbatches.Load() - before; got != 1 {
		t.Errorf("the %d frames that waited went out in %d writes, want 1", n, got)
	}
	if err := s.Send(context.Background(), []byte(`{"id":"last"}`)); err != nil {
		t.Fatal(err)
	}
	if got := recvData(t, s); got != string(big) {
		t.Fatalf("first frame back is %d bytes, want the big frame", len(got))
	}
	seen := map[string]bool{}
	for range n + 1 {
		var m struct{ ID json.RawMessage }
		if err := json.Unmarshal([]byte(recvData(t, s)), &m); err != nil {
			t.Fatal(err)
		}
		seen[string(m.ID)] = true
	}
	if len(seen) != n+1 || !seen[`"last"`] || seen[`"withdrawn"`] {
		t.Errorf("frames back: %v; want ids 1 to %d and \"last\", not \"withdrawn\"", seen, n)
	}
	for _, e := range rec.find(func(e Event) bool { return e.Kind == KindFrame && e.Dir == Outgoing }) {
		if strings.Contains(string(e.Data), "withdrawn") {
			t.Errorf("the tap heard of the withdrawn frame: %s", e.Data)
		}
	}
}

// waitQueued waits until n frames wait for the pipe.
func waitQueued(t *testing.T, s *Stdio, n int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		s.wmu.Lock()
		got := len(s.wqueue)
		s.wmu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d frames wait for the pipe, want %d", got, n)
		}
		runtime.Gosched()
	}
}
