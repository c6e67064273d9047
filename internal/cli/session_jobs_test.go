package cli

import (
	"context"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// A job whose call has ended is not "waiting" because a legacy request of
// another command, parked while both were under way, still names it.
func TestFinishedJobIsNotWaiting(t *testing.T) {
	h := &heldSession{name: "t", disp: &dispatcher{board: newParkBoard(10, 1<<20), name: "t"}, jobs: newJobTable()}
	ios, _, _, _ := Test()
	j := &job{parked: make(chan struct{}, 1), done: make(chan struct{}), out: &capturedOutput{budget: h.jobs.budget}, code: ExitOK}
	j.slot = &cmdSlot{args: []string{"call", "x"}}
	other := &cmdSlot{args: []string{"call", "y"}}
	if err := h.jobs.add(j); err != nil {
		t.Fatal(err)
	}
	p := &parked{Method: "elicitation/create", Elicit: &mcp.ElicitParams{Message: "for y"}, told: []*cmdSlot{j.slot, other}, params: []byte(`{}`)}
	if _, err := h.disp.board.add(p); err != nil {
		t.Fatal(err)
	}
	close(j.done) // the job's call ended
	if code := h.awaitJob(context.Background(), j, ios, false, false); code != ExitOK {
		t.Fatalf("mcpi result of a finished job = exit %d, want its own exit 0", code)
	}
}
