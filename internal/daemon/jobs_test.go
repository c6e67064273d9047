package daemon

import (
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// A job whose call has ended is not waiting because a legacy request of
// another command, parked while both were under way, still names it.
func TestFinishedJobIsNotWaiting(t *testing.T) {
	board, jobs := NewBoard(10, 1<<20), NewJobs()
	j := jobs.NewJob([]string{"call", "x"})
	other := NewSlot([]string{"call", "y"}, nil)
	if err := jobs.Add(j); err != nil {
		t.Fatal(err)
	}
	p := &Parked{Method: "elicitation/create", Elicit: &mcp.ElicitParams{Message: "for y"}, told: []*Slot{j.Slot, other}, params: []byte(`{}`)}
	if _, err := board.add(p); err != nil {
		t.Fatal(err)
	}
	if got := j.Waiting(board); len(got) != 1 {
		t.Fatalf("a job under way told of a legacy request: waiting on %d, want 1", len(got))
	}
	close(j.Done) // the job's call ended
	if got := j.Waiting(board); len(got) != 0 {
		t.Fatalf("a finished job waits on %d request(s), want none", len(got))
	}
}
