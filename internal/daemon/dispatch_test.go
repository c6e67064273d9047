package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// fakeAnswerer answers as a command given kinds' answers would, and keeps
// what it was told to say.
type fakeAnswerer struct {
	name  string
	kinds []Kind
	mu    sync.Mutex
	said  []string
}

func (f *fakeAnswerer) Answers(k Kind) bool {
	for _, x := range f.kinds {
		if x == k {
			return true
		}
	}
	return false
}

func (f *fakeAnswerer) Say(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.said = append(f.said, fmt.Sprintf(format, args...))
}

func (f *fakeAnswerer) saidText() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.said, "\n")
}

func (f *fakeAnswerer) ListRoots(context.Context) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{}, nil
}

func (f *fakeAnswerer) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{Model: f.name}, nil
}

func (f *fakeAnswerer) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: map[string]any{"by": f.name}}, nil
}

func newDispatcher(count int, bytes int64) *Dispatcher {
	return &Dispatcher{name: "s", board: NewBoard(count, bytes)}
}

// command registers a command under way with answerer a.
func command(d *Dispatcher, a Answerer, args ...string) *Slot {
	s := NewSlot(args, nil)
	s.SetAnswerer(a)
	d.add(s)
	return s
}

// waitParked waits until the board holds n requests.
func waitParked(t *testing.T, b *Board, n int) []*Parked {
	t.Helper()
	deadline := time.After(5 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if l := b.List(); len(l) == n {
			return l
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the board holds %d request(s), want %d", len(b.List()), n)
		}
	}
}

// A legacy server's request names no command: the newest command given
// answers of its kind answers it, whatever command is newer.
func TestDispatcherPicksTheCommandGivenTheAnswer(t *testing.T) {
	d := newDispatcher(10, 1<<20)
	sampler := &fakeAnswerer{name: "sampler", kinds: []Kind{KindSampling}}
	elicitor := &fakeAnswerer{name: "elicitor", kinds: []Kind{KindElicit}}
	command(d, elicitor, "call", "a")
	command(d, sampler, "call", "b")
	r, err := d.Elicit(context.Background(), &mcp.ElicitParams{Message: "?"})
	if err != nil || r.Content["by"] != "elicitor" {
		t.Fatalf("Elicit = %+v, %v; want the elicitor's answer", r, err)
	}
	m, err := d.CreateMessage(context.Background(), &mcp.CreateMessageParams{})
	if err != nil || m.Model != "sampler" {
		t.Fatalf("CreateMessage = %+v, %v; want the sampler's answer", m, err)
	}
}

// A modern server's request travels with the command's own: that command
// answers it, even when another one was given the answer.
func TestDispatcherOwnCommandAnswers(t *testing.T) {
	d := newDispatcher(10, 1<<20)
	own := &fakeAnswerer{name: "own", kinds: []Kind{KindElicit}}
	other := &fakeAnswerer{name: "other", kinds: []Kind{KindElicit}}
	s := command(d, own, "call", "a")
	command(d, other, "call", "b")
	r, err := d.Elicit(WithSlot(context.Background(), s), &mcp.ElicitParams{Message: "?"})
	if err != nil || r.Content["by"] != "own" {
		t.Fatalf("Elicit = %+v, %v; want the own command's answer", r, err)
	}
}

// A request no command was given the answer to is parked: the command
// it holds up is told how to answer it, mcpi answer's answer is the
// server's, and the board is empty again.
func TestDispatcherParksAndAnswers(t *testing.T) {
	d := newDispatcher(10, 1<<20)
	quiet := &fakeAnswerer{name: "quiet"}
	s := command(d, quiet, "call", "confirm", "--session", "s")
	type res struct {
		r   *mcp.ElicitResult
		err error
	}
	done := make(chan res, 1)
	go func() {
		r, err := d.Elicit(WithSlot(context.Background(), s), &mcp.ElicitParams{Message: "sure?"})
		done <- res{r, err}
	}()
	p := waitParked(t, d.board, 1)[0]
	if p.Command != "call confirm" {
		t.Errorf("the parked request belongs to %q, want the command line without --session", p.Command)
	}
	if !strings.Contains(quiet.saidText(), "mcpi answer 1 --session s") {
		t.Errorf("the command was told %q", quiet.saidText())
	}
	if !d.board.Answer(p.ID, &mcp.ElicitResult{Action: mcp.ElicitDecline}, nil) {
		t.Fatal("the answer was not taken")
	}
	got := <-done
	if got.err != nil || got.r.Action != mcp.ElicitDecline {
		t.Fatalf("Elicit = %+v, %v; want mcpi answer's decline", got.r, got.err)
	}
	if d.board.Answer(p.ID, nil, errors.New("twice")) {
		t.Error("a request was answered twice")
	}
	if n := len(d.board.List()); n != 0 {
		t.Errorf("%d request(s) left on the board", n)
	}
}

// Past the board's budget a request is refused with a JSON-RPC error, and
// the commands it holds up are told once until the board has room again.
func TestDispatcherRefusesPastTheBudget(t *testing.T) {
	d := newDispatcher(1, 1<<20)
	quiet := &fakeAnswerer{name: "quiet"}
	command(d, quiet, "call", "a")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.Elicit(ctx, &mcp.ElicitParams{Message: "first"})
	waitParked(t, d.board, 1)
	for range 3 {
		_, err := d.Elicit(ctx, &mcp.ElicitParams{Message: "more"})
		var re *mcp.RPCError
		if !errors.As(err, &re) || !strings.Contains(re.Message, "refused") {
			t.Fatalf("a request past the budget: %v, want a JSON-RPC error saying it was refused", err)
		}
	}
	if n := strings.Count(quiet.saidText(), "warning: mcpi refused"); n != 1 {
		t.Errorf("the command was warned %d times, want once:\n%s", n, quiet.saidText())
	}
	if u := d.board.Usage(); u.Refused != 3 {
		t.Errorf("the budget counts %d refusals, want 3", u.Refused)
	}
}

// A legacy server's request names no command. Calls started one after the
// other (each held up by a request of its own before the next starts) each
// own the request that came while they were the only one free to cause
// it: no call is listed another's request.
func TestDispatcherLegacyRequestBelongsToTheFreeCommand(t *testing.T) {
	d := newDispatcher(10, 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var slots []*Slot
	for i := range 3 {
		s := command(d, &fakeAnswerer{name: fmt.Sprint(i)}, "call", fmt.Sprintf("job%d", i))
		slots = append(slots, s)
		go d.Elicit(ctx, &mcp.ElicitParams{Message: fmt.Sprint(i)})
		waitParked(t, d.board, i+1)
	}
	for i, s := range slots {
		got := d.board.ParkedFor(s)
		if len(got) != 1 || got[0].Elicit.Message != fmt.Sprint(i) || got[0].Command != fmt.Sprintf("call job%d", i) {
			var desc []string
			for _, p := range got {
				desc = append(desc, fmt.Sprintf("#%d %q of %q", p.ID, p.Elicit.Message, p.Command))
			}
			t.Errorf("command %d waits on %v, want its own request only", i, desc)
		}
	}
	// Two commands free at once: the request is nobody's, and both are
	// told of it.
	a := command(d, &fakeAnswerer{name: "a"}, "call", "a")
	b := command(d, &fakeAnswerer{name: "b"}, "call", "b")
	go d.Elicit(ctx, &mcp.ElicitParams{Message: "either"})
	p := waitParked(t, d.board, 4)[3]
	if p.Command != "" || len(d.board.ParkedFor(a)) != 1 || len(d.board.ParkedFor(b)) != 1 {
		t.Errorf("an ambiguous request: command %q; a waits on %d, b on %d", p.Command, len(d.board.ParkedFor(a)), len(d.board.ParkedFor(b)))
	}
}
