package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// maxStrays bounds the requests remembered as dropped or answered in the
// peer's place; past it the oldest is forgotten. An id longer than
// maxStrayID is remembered by its digest, so the ledger stays small
// whatever ids a peer makes up.
const (
	maxStrays  = 4096
	maxStrayID = 128
)

// strays remembers the requests the proxy kept from the peer: dropped,
// or answered in its place. A peer that answers one anyway (it never got
// it: a server guessing ids, a replay of another run) is a stray: its
// answer to a request the proxy answered is withheld (the sender has its
// answer, and a second one for the same id would break it); its answer to
// a dropped request goes on (the sender is still waiting). Either is an
// intercept event, so the trace says what the peer did. A request sent on
// with the same id (the next session's, a retry) ends what was kept of
// it. Safe for concurrent use.
type strays struct {
	n    atomic.Int32
	mu   sync.Mutex
	kept map[strayKey]stray
	fifo []keptAt
	gen  uint64
	emit func(transport.Event)
}

// strayKey is a request's direction, its session (over Streamable HTTP;
// "" over stdio and HTTP+SSE) and its id.
type strayKey struct {
	dir     transport.Direction
	session string
	id      string
}

type stray struct {
	answered bool
	gen      uint64
}

type keptAt struct {
	key strayKey
	gen uint64
}

func newStrays(emit func(transport.Event)) *strays {
	return &strays{kept: map[strayKey]stray{}, emit: emit}
}

// keyOf is the ledger's key of the id of a frame of dir in session.
func keyOf(dir transport.Direction, session string, id json.RawMessage) strayKey {
	k := strayKey{dir: dir, session: session, id: string(id)}
	if len(k.id) > maxStrayID {
		sum := sha256.Sum256(id)
		k.id = "sha256:" + hex.EncodeToString(sum[:])
	}
	return k
}

// keep notes that the request frame of dir was not sent on: answered in
// the peer's place, or dropped. A frame that is no request is ignored.
func (s *strays) keep(dir transport.Direction, session string, frame []byte, answered bool) {
	m := idOf(frame)
	if s == nil || m.Method == "" || len(m.ID) == 0 {
		return
	}
	k := keyOf(dir, session, m.ID)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	s.kept[k] = stray{answered: answered, gen: s.gen}
	s.fifo = append(s.fifo, keptAt{k, s.gen})
	for len(s.kept) > maxStrays || len(s.fifo) > 2*maxStrays {
		old := s.fifo[0]
		s.fifo = s.fifo[1:]
		if e, ok := s.kept[old.key]; ok && e.gen == old.gen {
			delete(s.kept, old.key)
		}
	}
	s.n.Store(int32(len(s.kept)))
}

// judge judges a frame of dir before anything else sees it. A request
// ends what was kept of an earlier one of its id. An answer to a request
// the proxy kept from the peer is said; withhold is true when it must not
// go on (the proxy answered that request). An answer whose id is own (the
// id of the request whose HTTP response carries it) answers a request
// that was sent on, and is never a stray.
func (s *strays) judge(dir transport.Direction, session, own string, frame []byte) (withhold bool) {
	if s == nil || s.n.Load() == 0 {
		return false
	}
	m := idOf(frame)
	if len(m.ID) == 0 || (m.Method == "" && own != "" && string(m.ID) == own) {
		return false
	}
	if m.Method != "" {
		s.forget(keyOf(dir, session, m.ID))
		return false
	}
	e, ok := s.forget(keyOf(opposite(dir), session, m.ID))
	if !ok {
		return false
	}
	peer, sender := "server", "host"
	if dir == transport.Outgoing {
		peer, sender = "host", "server"
	}
	c := intercept.Change{Action: "stray"}
	sent := [][]byte{frame}
	if e.answered {
		sent = nil
		c.Note = fmt.Sprintf("the %s answered id %s, a request it never got (the proxy answered it in its place): withheld, the %s has its answer", peer, clipID(m.ID), sender)
	} else {
		c.Note = fmt.Sprintf("the %s answered id %s, a request it never got (the proxy dropped it): forwarded", peer, clipID(m.ID))
	}
	s.emit(c.Event(dir, frame, sent, nil, time.Now()))
	return e.answered
}

func (s *strays) forget(k strayKey) (stray, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.kept[k]
	if ok {
		delete(s.kept, k)
		s.n.Store(int32(len(s.kept)))
	}
	return e, ok
}

// clipID is an id as a note quotes it: at most maxStrayID bytes.
func clipID(id json.RawMessage) string {
	if len(id) > maxStrayID {
		return string(id[:maxStrayID]) + "…"
	}
	return string(id)
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
