package common

import (
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/rows"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

func TestInboxNeverBlocksAndCounts(t *testing.T) {
	b := NewInbox()
	const n = maxPendingWire + 1000
	for range n {
		b.Observe(transport.Event{Kind: transport.KindFrame, Data: []byte("{}")})
		b.Notify(session.Notification{Method: "notifications/message"})
	}
	for i := range 10 {
		b.Progress(1, mcp.ProgressParams{Progress: float64(i)})
	}
	done := make(chan struct{})
	close(done)
	batch := b.take()
	if len(batch.wire)+batch.WireDropped != n || batch.WireDropped != 1000 {
		t.Errorf("wire %d dropped %d, want %d in all", len(batch.wire), batch.WireDropped, n)
	}
	if batch.NotificationCount != n || len(batch.Notifications) != maxPendingNotifications {
		t.Errorf("notifications %d kept %d", batch.NotificationCount, len(batch.Notifications))
	}
	if p := batch.Progress[1]; p.Progress != 9 || len(batch.Progress) != 1 {
		t.Errorf("progress = %+v", batch.Progress)
	}
	if b.take().NotificationCount != 0 {
		t.Error("take did not empty the inbox")
	}
}

func TestInboxNext(t *testing.T) {
	b := NewInbox()
	done := make(chan struct{})
	got := make(chan any, 1)
	go func() { got <- b.Next(done)() }()
	b.Observe(transport.Event{Kind: transport.KindStderr, Data: []byte("line")})
	select {
	case msg := <-got:
		if bt, ok := msg.(*Batch); !ok || len(bt.Entries) != 1 || bt.Entries[0].Kind != rows.KindStderr {
			t.Errorf("msg = %#v", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no batch")
	}
	// Next returns nil once done is closed.
	go func() { got <- b.Next(done)() }()
	close(done)
	select {
	case msg := <-got:
		if msg != nil {
			t.Errorf("msg after done = %#v", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not end")
	}
}
