package bounds

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestBudgetCountsAndBytes(t *testing.T) {
	b := NewBudget("parked", 2, 100)
	if err := b.Take(60); err != nil {
		t.Fatal(err)
	}
	err := b.Take(50)
	var ee *ExceededError
	if !errors.As(err, &ee) || !errors.Is(err, ErrExceeded) {
		t.Fatalf("Take over the bytes = %v, want an ExceededError", err)
	}
	if !strings.Contains(err.Error(), "parked") {
		t.Errorf("the refusal does not name its budget: %v", err)
	}
	if err := b.Take(40); err != nil {
		t.Fatal(err)
	}
	if err := b.Take(0); err == nil {
		t.Fatal("a third item passed a budget of two")
	}
	u := b.Usage()
	if u.Count != 2 || u.Bytes != 100 || u.Refused != 2 || u.RefusedBytes != 50 || u.PeakBytes != 100 {
		t.Errorf("usage = %+v", u)
	}
	b.Give(60)
	b.Give(40)
	if u := b.Usage(); u.Count != 0 || u.Bytes != 0 || u.PeakCount != 2 {
		t.Errorf("after giving back: %+v", u)
	}
}

func TestQueueRefusesPastItsBudget(t *testing.T) {
	q := NewQueue[string](NewBudget("tail", 0, 10))
	if err := q.Push("abcdef", 6); err != nil {
		t.Fatal(err)
	}
	if err := q.Push("ghijk", 5); !errors.Is(err, ErrExceeded) {
		t.Fatalf("push past the bytes = %v", err)
	}
	if err := q.Push("gh", 2); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, want := range []string{"abcdef", "gh"} {
		got, err := q.Pop(ctx)
		if err != nil || got != want {
			t.Fatalf("Pop = %q, %v; want %q", got, err, want)
		}
	}
	if u := q.Budget().Usage(); u.Bytes != 0 || u.Count != 0 {
		t.Errorf("an empty queue still accounts %+v", u)
	}
	q.Close()
	if _, err := q.Pop(ctx); !errors.Is(err, ErrQueueClosed) {
		t.Errorf("Pop of a closed queue = %v", err)
	}
}

func TestClockErrorIsADeadline(t *testing.T) {
	ctx, cancel := Clock{"write", time.Millisecond}.Context(context.Background())
	defer cancel()
	<-ctx.Done()
	cause := context.Cause(ctx)
	if !errors.Is(cause, context.DeadlineExceeded) || !strings.Contains(cause.Error(), "write clock") {
		t.Errorf("cause = %v", cause)
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", 1000)
	got := Clip(long)
	if len(got) > MaxText+32 || !strings.Contains(got, "more)") {
		t.Errorf("Clip = %d bytes: %q", len(got), got[len(got)-20:])
	}
	if Clip("short") != "short" {
		t.Error("Clip changed a short text")
	}
}
