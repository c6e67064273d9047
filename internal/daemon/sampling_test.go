package daemon

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

type sampled struct {
	r   *mcp.CreateMessageResult
	err error
}

// createMessage asks d as the server would, in the background.
func createMessage(d *Dispatcher) chan sampled {
	done := make(chan sampled, 1)
	go func() {
		r, err := d.CreateMessage(context.Background(), &mcp.CreateMessageParams{MaxTokens: 5})
		done <- sampled{r, err}
	}()
	return done
}

// TestSessionModelAnswersSampling: a sampling request no command answers
// is answered by the session's model (session start --sampling-model),
// and a failure of the model is the server's error; the board is empty
// after.
func TestSessionModelAnswersSampling(t *testing.T) {
	d := newDispatcher(10, 1<<20)
	d.sample = func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Role: "assistant", Model: "the-model"}, nil
	}
	got := <-createMessage(d)
	if got.err != nil || got.r.Model != "the-model" {
		t.Fatalf("CreateMessage = %+v, %v; want the model's answer", got.r, got.err)
	}
	failed := &mcp.RPCError{Code: mcp.CodeInternalError, Message: "sampling: the model x:y failed"}
	d.sample = func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) { return nil, failed }
	got = <-createMessage(d)
	if !errors.Is(got.err, failed) {
		t.Fatalf("CreateMessage = %+v, %v; want the model's failure", got.r, got.err)
	}
	if n := len(d.board.List()); n != 0 {
		t.Errorf("%d request(s) left on the board", n)
	}
}

// TestPersonAnswersBeforeTheModel: a person who answers a parked sampling
// request before the session's model does gives the server's answer, and
// the model's turn is cancelled.
func TestPersonAnswersBeforeTheModel(t *testing.T) {
	d := newDispatcher(10, 1<<20)
	quiet := &fakeAnswerer{name: "quiet"}
	command(d, quiet, "call", "sample", "--session", "s")
	started, cancelled := make(chan struct{}), make(chan struct{})
	d.sample = func(ctx context.Context, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}
	done := createMessage(d)
	p := waitParked(t, d.board, 1)[0]
	<-started
	if !d.board.Answer(p.ID, &mcp.CreateMessageResult{Model: mcp.ReplyModel}, nil) {
		t.Fatal("the person's answer was not taken")
	}
	got := <-done
	if got.err != nil || got.r.Model != mcp.ReplyModel {
		t.Fatalf("CreateMessage = %+v, %v; want the person's answer", got.r, got.err)
	}
	<-cancelled
	if !strings.Contains(quiet.saidText(), "mcpi answer 1 --session s`, or the session's model answers it") {
		t.Errorf("the command was told %q", quiet.saidText())
	}
}
