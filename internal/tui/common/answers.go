package common

import (
	"sync"
	"time"
)

// Answered is a server request the person answered, and when.
type Answered struct {
	At    time.Time
	Kind  RequestKind
	Reply Reply
}

// maxAnswered is how many answers the log keeps: a call saved as a step
// takes the answers given while it ran, which are the last few.
const maxAnswered = 64

// AnswerLog keeps the last answers given, for a call saved as a step of a
// collection (its answers: what the server asked while it ran). It is
// written from the session's goroutines and read from the UI's.
type AnswerLog struct {
	mu   sync.Mutex
	list []Answered
}

// Add records an answer.
func (l *AnswerLog) Add(a Answered) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, a)
	if len(l.list) > maxAnswered {
		l.list = append(l.list[:0], l.list[len(l.list)-maxAnswered:]...)
	}
}

// Between returns the answers given from from to to, in order.
func (l *AnswerLog) Between(from, to time.Time) []Answered {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Answered
	for _, a := range l.list {
		if !a.At.Before(from) && !a.At.After(to) {
			out = append(out, a)
		}
	}
	return out
}
