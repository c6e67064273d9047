// Package watch reports changes to files and directory trees, debounced:
// what `mcpi connect --watch` restarts a server on.
//
// A directory is watched recursively: its tree is walked without following
// symbolic links (a link loop cannot hang or multiply the walk), .git and
// node_modules are skipped, and at most MaxDirs directories are watched;
// directories that appear later are added as they do. A file is watched
// through its directory with a filter, so that an editor that replaces it
// (delete, then create) is still seen.
//
// The debounce (Debounce) knows nothing of fsnotify: paths in, one Change
// out after a quiet period, so a file written a thousand times a second is
// one change per period, never a flood and never an unbounded buffer.
package watch

import (
	"context"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
)

// MaxPaths is how many of a change's paths a Change names; Count says how
// many events there were.
const MaxPaths = 10

// Quiet is the default quiet period: a change is reported once nothing has
// moved for this long.
const Quiet = 300 * time.Millisecond

// maxWaitFactor bounds how long a change that never goes quiet waits: a
// tree written without pause is still reported every maxWaitFactor quiet
// periods.
const maxWaitFactor = 10

// Change is what moved during one period: the first MaxPaths distinct
// paths, and how many events there were in all.
type Change struct {
	Paths []string
	Count int
}

func (c *Change) add(path string) {
	c.Count++
	if len(c.Paths) >= MaxPaths {
		return
	}
	for _, p := range c.Paths {
		if p == path {
			return
		}
	}
	c.Paths = append(c.Paths, path)
}

func (c *Change) merge(o Change) {
	n := c.Count + o.Count
	for _, p := range o.Paths {
		c.add(p)
	}
	c.Count = n
}

// Debounce reads paths from in and sends one Change on out once quiet has
// passed with no new path (or maxWaitFactor quiet periods after the first,
// when it never goes quiet). A Change that out does not take yet absorbs
// the next ones, so what it holds is bounded by MaxPaths whatever the rate.
// It returns when ctx ends or in is closed (after handing over what it
// holds, if out takes it before ctx ends).
func Debounce(ctx context.Context, in <-chan string, out chan<- Change, quiet time.Duration) {
	if quiet <= 0 {
		quiet = Quiet
	}
	clock := bounds.Clock{Name: "watch quiet", D: quiet}
	timer := clock.Timer()
	timer.Stop()
	defer timer.Stop()
	var (
		pending, ready       Change
		havePending, isReady bool
		first                time.Time
	)
	flush := func() {
		if isReady {
			ready.merge(pending)
		} else {
			ready = pending
		}
		isReady = true
		pending, havePending = Change{}, false
	}
	for {
		var send chan<- Change
		if isReady {
			send = out
		}
		select {
		case <-ctx.Done():
			return
		case p, ok := <-in:
			if !ok {
				if havePending {
					flush()
				}
				if isReady {
					select {
					case out <- ready:
					case <-ctx.Done():
					}
				}
				return
			}
			now := time.Now()
			if !havePending {
				havePending, first = true, now
			}
			pending.add(p)
			wait := quiet
			if left := first.Add(maxWaitFactor * quiet).Sub(now); left < wait {
				wait = max(left, 0)
			}
			timer.Reset(wait)
		case <-timer.C:
			if havePending {
				flush()
			}
		case send <- ready:
			ready, isReady = Change{}, false
		}
	}
}
