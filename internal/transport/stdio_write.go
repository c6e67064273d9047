package transport

import (
	"context"
	"fmt"
	"os"
	"time"
)

// The writes to the server's stdin. A sender writes its own frame, from
// its own goroutine, when no other write is under way: no hand-over to a
// writer goroutine and back. Frames sent meanwhile wait in a queue, and
// the sender that holds the pipe writes them after its own, all of them
// in one write(2), so that many senders cost a few writes, not one each.
//
// A write the pipe does not take at once (a server that reads slowly or
// not at all) is finished by a goroutine of its own, with what queued
// behind it, in order: the sender still returns when its context ends, and
// no frame is ever half written. A frame that waits in the queue is
// withdrawn, unwritten, when its sender's context ends first.

// writeReq is a frame waiting in the queue.
type writeReq struct {
	data []byte
	done chan error // its outcome; nil for the sender holding the pipe
	// taken, under wmu, says that its write began: it can no longer be
	// withdrawn.
	taken bool
}

// maxSenderRounds bounds how many rounds of the queue a sender writes
// after its own frame before it leaves the rest to a goroutine: a sender
// is not held for long by those who keep coming.
const maxSenderRounds = 4

// Send writes frame followed by a newline. It returns once the frame is
// written, or when ctx ends first; a frame whose write began is written
// whole all the same.
func (s *Stdio) Send(ctx context.Context, frame []byte) error {
	select {
	case <-s.closed:
		return ErrClosed
	default:
	}
	select {
	case <-s.exited:
		return s.exitError()
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.wmu.Lock()
	if !s.wbusy {
		s.wbusy = true
		s.wmu.Unlock()
		return s.writeOwn(ctx, frame)
	}
	req := &writeReq{data: frame, done: make(chan error, 1)}
	s.wqueue = append(s.wqueue, req)
	s.wmu.Unlock()
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		s.withdraw(req)
		return ctx.Err()
	}
}

// withdraw takes a frame out of the queue if its write has not begun.
func (s *Stdio) withdraw(req *writeReq) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if req.taken {
		// The write goes on in the background and finishes or fails
		// when the server reads or exits.
		return
	}
	for i, r := range s.wqueue {
		if r == req {
			s.wqueue = append(s.wqueue[:i], s.wqueue[i+1:]...)
			return
		}
	}
}

// writeOwn writes frame, and then what queued meanwhile, for the sender
// that holds the pipe (wbusy).
func (s *Stdio) writeOwn(ctx context.Context, frame []byte) error {
	own := &writeReq{data: frame, taken: true}
	batch := []*writeReq{own}
	var ownErr error
	for round := 0; ; round++ {
		buf := s.frameBatch(batch)
		n, err := s.tryWrite(buf)
		if err == nil && n < len(buf) {
			// The pipe is full: the rest goes on in the background.
			rest := append([]byte(nil), buf[n:]...)
			if batch[0] != own {
				go s.writeRest(batch, rest, n)
				return ownErr
			}
			own.done = make(chan error, 1)
			go s.writeRest(batch, rest, n)
			select {
			case err := <-own.done:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err != nil {
			err = s.writeFailed(err, len(batch))
		}
		if batch[0] == own {
			ownErr = err
			batch = batch[1:]
		}
		settle(batch, err)
		batch = s.takeQueue()
		switch {
		case batch == nil:
			return ownErr
		case round >= maxSenderRounds:
			go s.writeRest(batch, nil, 0)
			return ownErr
		}
	}
}

// writeRest writes, with the pipe held, the rest of a batch whose first
// written bytes went out already, then what queues behind it, waiting for
// the pipe as long as it takes (Close ends the wait).
func (s *Stdio) writeRest(batch []*writeReq, rest []byte, written int) {
	buf := rest
	if buf == nil {
		buf = s.frameBatch(batch)
	}
	for {
		_, err := s.stdin.Write(buf)
		if err != nil {
			err = s.writeFailed(err, len(batch))
		}
		settle(batch, err)
		if batch = s.takeQueue(); batch == nil {
			return
		}
		buf = s.frameBatch(batch)
	}
}

// takeQueue takes the frames waiting, marked taken. With none waiting, it
// gives the pipe up and returns nil.
func (s *Stdio) takeQueue() []*writeReq {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	batch := s.wqueue
	s.wqueue = nil
	if len(batch) == 0 {
		s.wbusy = false
		return nil
	}
	for _, r := range batch {
		r.taken = true
	}
	return batch
}

// frameBatch is the frames of batch as they go on the wire, each followed
// by a newline. The tap hears of each before the server can answer it, so
// that a request never appears after its own response.
func (s *Stdio) frameBatch(batch []*writeReq) []byte {
	s.wbatches.Add(1)
	n := 0
	for _, r := range batch {
		n += len(r.data) + 1
		s.emit(Event{Kind: KindFrame, Dir: Outgoing, Data: r.data})
	}
	buf := s.wbuf[:0]
	if cap(buf) < n {
		buf = make([]byte, 0, n)
	}
	for _, r := range batch {
		buf = append(buf, r.data...)
		buf = append(buf, '\n')
	}
	if cap(buf) <= maxKeptWriteBuf {
		s.wbuf = buf
	}
	return buf
}

// maxKeptWriteBuf bounds the write buffer kept from one write to the next.
const maxKeptWriteBuf = 64 << 10

// settle gives each sender of batch the outcome of its write.
func settle(batch []*writeReq, err error) {
	for _, r := range batch {
		if r.done != nil {
			r.done <- err
		}
	}
}

// writeFailed says why a write of n frames failed: the connection's end
// when that is why (Close shut stdin under it, or the server exited).
func (s *Stdio) writeFailed(err error, n int) error {
	err = fmt.Errorf("writing to server stdin: %w", err)
	text := "the frame above was not delivered"
	if n > 1 {
		text = fmt.Sprintf("the %d frames above were not delivered", n)
	}
	s.emit(Event{Kind: KindLifecycle, Text: text, Err: err.Error()})
	select {
	case <-s.closed:
		return ErrClosed
	case <-s.exited:
		return s.exitError()
	case <-time.After(100 * time.Millisecond):
	}
	return err
}

// tryWrite writes what the pipe takes of b at once, without waiting.
// Where the pipe cannot be written without waiting (its descriptor is
// blocking), it writes nothing: the caller then writes in the background.
func (s *Stdio) tryWrite(b []byte) (int, error) {
	if s.stdinRaw == nil {
		return 0, nil
	}
	var n int
	var werr error
	err := s.stdinRaw.Write(func(fd uintptr) bool {
		n, werr = writeNow(fd, b)
		return true
	})
	if err != nil {
		return n, err
	}
	if werr != nil {
		return n, &os.PathError{Op: "write", Path: s.stdin.Name(), Err: werr}
	}
	return n, nil
}
