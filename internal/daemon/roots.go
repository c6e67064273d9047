package daemon

import (
	"encoding/json"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// UseRoots makes roots the session's until done is called (a collection
// step's roots, while the step runs); asked is closed when, on the
// session's wire, the server has been answered with them.
func (h *Held) UseRoots(roots []mcp.Root) (asked <-chan struct{}, done func()) {
	old := h.Roots()
	tail := h.Hub().Subscribe(true)
	h.SetRoots(roots)
	ch, stop := make(chan struct{}), make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-tail.Ready():
			}
			for e, ok := tail.TryPop(); ok; e, ok = tail.TryPop() {
				if e.Kind == "frame" && e.Dir == transport.Outgoing.String() && answersRoots(e.Frame) {
					close(ch)
					return
				}
			}
		}
	}()
	return ch, func() {
		close(stop)
		h.Hub().Unsubscribe(tail)
		h.SetRoots(old)
	}
}

// answersRoots says whether a frame mcpi sent answers roots/list.
func answersRoots(frame []byte) bool {
	var m struct {
		Result *struct {
			Roots json.RawMessage `json:"roots"`
		} `json:"result"`
	}
	return json.Unmarshal(frame, &m) == nil && m.Result != nil && m.Result.Roots != nil
}
