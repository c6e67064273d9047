package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// The ledger stays small whatever ids a peer makes up, and its bound
// forgets the oldest entry, never one kept again since.
func TestStraysLedgerIsBounded(t *testing.T) {
	s := newStrays(func(transport.Event) {})
	long := `"` + strings.Repeat("x", 1<<20) + `"`
	s.keep(transport.Incoming, "", []byte(`{"jsonrpc":"2.0","id":`+long+`,"method":"roots/list"}`), true)
	for k := range s.kept {
		if len(k.id) > 80 {
			t.Errorf("a key of %d bytes kept", len(k.id))
		}
	}
	if !s.judge(transport.Outgoing, "", "", []byte(`{"jsonrpc":"2.0","id":`+long+`,"result":{}}`)) {
		t.Error("the answer to the long id was not withheld")
	}

	req := func(id int) []byte { return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)) }
	s.keep(transport.Outgoing, "", req(1), true)
	s.judge(transport.Outgoing, "", "", req(1)) // sent on again: forgotten
	for id := 2; id <= maxStrays; id++ {
		s.keep(transport.Outgoing, "", req(id), false)
	}
	s.keep(transport.Outgoing, "", req(1), true) // the newest now
	s.keep(transport.Outgoing, "", req(maxStrays+1), false)
	if len(s.kept) > maxStrays {
		t.Errorf("%d kept, past the bound %d", len(s.kept), maxStrays)
	}
	if _, ok := s.kept[keyOf(transport.Outgoing, "", []byte("1"))]; !ok {
		t.Error("id 1, kept again last, was forgotten in its first keeping's turn")
	}
	if _, ok := s.kept[keyOf(transport.Outgoing, "", []byte("2"))]; ok {
		t.Error("id 2, the oldest, is still kept")
	}
}
