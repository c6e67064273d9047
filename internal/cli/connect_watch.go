package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/tui"
	"github.com/mcpi-dev/mcpi/internal/watch"
)

// watchRunClock bounds one --watch-run build.
var watchRunClock = bounds.Clock{Name: "watch-run", D: 10 * time.Minute}

// watchRunBytes bounds the build output kept for the TUI: the first part,
// and a line saying how much more there was.
const watchRunBytes = 256 << 10

// checkWatch refuses --watch and --watch-run where no stdio server can be
// restarted.
func (o *ConnectOptions) checkWatch() error {
	if len(o.Watch) == 0 {
		if o.WatchRun != "" {
			return command.FlagErrorf("--watch-run needs --watch PATH: the files whose change runs it")
		}
		return nil
	}
	switch {
	case o.Target.Session != "":
		return command.FlagErrorf("--watch restarts a stdio server; a live session's server is its daemon's (see mcpi session start --restart)")
	case o.Target.URL != "":
		return command.FlagErrorf("--watch restarts a stdio server: give it as -- COMMAND [ARGS...], not a URL")
	}
	return nil
}

// startWatch watches the paths of --watch and feeds the TUI's reloads: on
// each change, the build of --watch-run (if any), then a Reload. It ends
// with ctx; the watcher is closed then.
func (o *ConnectOptions) startWatch(ctx context.Context) (<-chan tui.Reload, error) {
	if len(o.Watch) == 0 {
		return nil, nil
	}
	if o.Target.Command == nil {
		return nil, command.FlagErrorf("--watch restarts a stdio server, and %s is not one", targetLabel(&o.Target))
	}
	out := make(chan tui.Reload, 1)
	w, err := watch.New(o.Watch, watch.Options{Warn: func(s string) {
		// A warning that finds the mailbox full is dropped: the TUI has
		// something to show already.
		select {
		case out <- tui.Reload{Warning: s}:
		default:
		}
	}})
	if err != nil {
		return nil, &command.FlagError{Err: err}
	}
	dir := o.Target.Dir
	if dir == "" {
		dir = o.IO.WorkDir()
	}
	go func() {
		defer w.Close()
		for {
			var c watch.Change
			select {
			case <-ctx.Done():
				return
			case ch, ok := <-w.C:
				if !ok {
					return
				}
				c = ch
			}
			r := tui.Reload{Changed: c.Paths, Count: c.Count}
			if o.WatchRun != "" {
				r.Output, r.Err = runBuild(ctx, o.WatchRun, dir)
			}
			select {
			case out <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// runBuild runs cmd through sh -c in dir under watchRunClock, and returns
// its output (stdout and stderr together, at most watchRunBytes).
func runBuild(ctx context.Context, cmd, dir string) (string, error) {
	ctx, cancel := watchRunClock.Context(ctx)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Dir = dir
	// A build whose children keep the output pipe open is not waited for
	// past the clock.
	c.WaitDelay = 5 * time.Second
	var buf cappedBuffer
	buf.max = watchRunBytes
	c.Stdout, c.Stderr = &buf, &buf
	err := c.Run()
	if cerr := context.Cause(ctx); cerr != nil && err != nil {
		var ce *bounds.ClockError
		if errors.As(cerr, &ce) {
			err = fmt.Errorf("%s: %w", cmd, cerr)
		}
	} else if err != nil {
		err = fmt.Errorf("%s: %w", cmd, err)
	}
	return buf.String(), err
}

// cappedBuffer keeps the first max bytes written and counts the rest.
type cappedBuffer struct {
	b       bytes.Buffer
	max     int
	dropped int64
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	room := c.max - c.b.Len()
	if room >= len(p) {
		return c.b.Write(p)
	}
	if room > 0 {
		c.b.Write(p[:room])
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	if c.dropped == 0 {
		return c.b.String()
	}
	return c.b.String() + fmt.Sprintf("\n… %s more not kept\n", bounds.Size(c.dropped))
}
