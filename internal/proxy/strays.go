package proxy

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// maxStrays bounds the requests remembered as dropped or answered in the
// peer's place; past it the oldest is forgotten.
const maxStrays = 4096

// strays remembers the requests the proxy kept from the peer: dropped,
// or answered in its place. A peer that answers one anyway (it never got
// it: a server guessing ids, a replay of another run) is a stray: its
// answer to a request the proxy answered is withheld (the sender has its
// answer, and a second one for the same id would break it); its answer to
// a dropped request goes on (the sender is still waiting). Either is an
// intercept event, so the trace says what the peer did. Safe for
// concurrent use.
type strays struct {
	n    atomic.Int32
	mu   sync.Mutex
	kept map[strayKey]bool // answered in the peer's place: true
	fifo []strayKey
	emit func(transport.Event)
}

// strayKey is a request's direction and id, as written.
type strayKey struct {
	dir transport.Direction
	id  string
}

func newStrays(emit func(transport.Event)) *strays {
	return &strays{kept: map[strayKey]bool{}, emit: emit}
}

// keep notes that the request frame of dir was not sent on: answered in
// the peer's place, or dropped. A frame that is no request is ignored.
func (s *strays) keep(dir transport.Direction, frame []byte, answered bool) {
	m := idOf(frame)
	if s == nil || m.Method == "" || len(m.ID) == 0 {
		return
	}
	k := strayKey{dir, string(m.ID)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.kept[k]; !ok {
		s.fifo = append(s.fifo, k)
		if len(s.fifo) > maxStrays {
			delete(s.kept, s.fifo[0])
			s.fifo = s.fifo[1:]
		}
	}
	s.kept[k] = answered
	s.n.Store(int32(len(s.kept)))
}

// withhold judges a frame of dir before anything else sees it: true when
// it is the peer's answer to a request the proxy answered in its place,
// and must not go on. An answer to a dropped request goes on, said.
func (s *strays) withhold(dir transport.Direction, frame []byte) bool {
	if s == nil || s.n.Load() == 0 {
		return false
	}
	m := idOf(frame)
	if m.Method != "" || len(m.ID) == 0 {
		return false
	}
	k := strayKey{opposite(dir), string(m.ID)}
	s.mu.Lock()
	answered, ok := s.kept[k]
	if ok {
		delete(s.kept, k)
		s.n.Store(int32(len(s.kept)))
	}
	s.mu.Unlock()
	if !ok {
		return false
	}
	peer, sender := "server", "host"
	if dir == transport.Outgoing {
		peer, sender = "host", "server"
	}
	c := intercept.Change{Action: "stray"}
	sent := [][]byte{frame}
	if answered {
		sent = nil
		c.Note = fmt.Sprintf("the %s answered id %s, a request it never got (the proxy answered it in its place): withheld, the %s has its answer", peer, m.ID, sender)
	} else {
		c.Note = fmt.Sprintf("the %s answered id %s, a request it never got (the proxy dropped it): forwarded", peer, m.ID)
	}
	s.emit(c.Event(dir, frame, sent, nil, time.Now()))
	return answered
}

// idOf reads a frame's id and method.
func idOf(frame []byte) (m struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}) {
	if len(frame) > 0 && frame[0] == '{' {
		json.Unmarshal(frame, &m)
	}
	if string(m.ID) == "null" {
		m.ID = nil
	}
	return m
}

func opposite(dir transport.Direction) transport.Direction {
	if dir == transport.Outgoing {
		return transport.Incoming
	}
	return transport.Outgoing
}
