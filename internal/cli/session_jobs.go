package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
)

// ExitWaiting: call --no-wait, or result, returned while the call waits on
// a server request.
const ExitWaiting command.ExitCode = 8

// stripNoWait returns args without --no-wait, and whether it was there
// (before a "--").
func stripNoWait(args []string) ([]string, bool) {
	out := make([]string, 0, len(args))
	found := false
	for i, a := range args {
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if a == "--no-wait" || a == "--no-wait=true" {
			found = true
			continue
		}
		out = append(out, a)
	}
	return out, found
}

// startJob runs a call given --no-wait as a job of the session h, and
// waits for it as mcpi result does.
func (d *daemonRunner) startJob(rctx context.Context, h *daemon.Held, args []string, cios *command.IOStreams, asJSON bool) command.ExitCode {
	j := h.Jobs().NewJob(args)
	if err := h.Jobs().Add(j); err != nil {
		fmt.Fprintf(cios.ErrOut, "mcpi: call --no-wait refused: %v\n", err)
		return command.ExitUsage
	}
	jios := command.NewIOStreams(strings.NewReader(""), j.Out.Writer(false), j.Out.Writer(true))
	jios.Dir = cios.Dir
	// The call outlives the command that started it: it ends with the
	// session, by its own clocks, or when cancelled before it waits.
	jctx, cancel := context.WithCancel(context.WithoutCancel(rctx))
	j.Cancel = cancel
	jctx, end := h.Begin(jctx, j.Slot)
	go func() {
		defer close(j.Done)
		defer end()
		defer cancel()
		go func() {
			select {
			case <-h.Ended():
				cancel()
			case <-jctx.Done():
			}
		}()
		j.Code = int(run(jctx, d.factory(jios, h, j.Slot), args))
		jios.Flush()
	}()
	return awaitJob(rctx, h, j, cios, asJSON, true)
}

// awaitJob waits for a job to end, or to wait on a server request of its
// own: then it prints the request in full, how to answer it and how to
// fetch the outcome, and returns ExitWaiting. Interrupted before the call
// waits on anything, a call started here is cancelled.
func awaitJob(ctx context.Context, h *daemon.Held, j *daemon.Job, cios *command.IOStreams, asJSON, started bool) command.ExitCode {
	for {
		select {
		case <-j.Done:
			// Ended: what it printed, whatever is parked meanwhile.
			j.Replay(cios.Out, cios.ErrOut)
			h.Jobs().Remove(j)
			return command.ExitCode(j.Code)
		default:
		}
		if list := j.Waiting(h.Board()); len(list) > 0 {
			mcptext.WriteWaiting(cios, h.Name(), j, list, asJSON)
			return ExitWaiting
		}
		select {
		case <-j.Done:
			j.Replay(cios.Out, cios.ErrOut)
			h.Jobs().Remove(j)
			return command.ExitCode(j.Code)
		case <-j.Parked:
		case <-ctx.Done():
			if started {
				j.Cancel()
				<-j.Done
				h.Jobs().Remove(j)
			}
			fmt.Fprintln(cios.ErrOut, "mcpi: interrupted")
			return command.ExitInterrupted
		}
	}
}

// ResultOptions are the input of `mcpi result`.
type ResultOptions struct {
	command.ConnOptions
	Job int
}

// NewCmdResult returns `mcpi result JOB`.
func NewCmdResult(f *command.Factory, runF func(context.Context, *ResultOptions) error) *cobra.Command {
	opts := &ResultOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "result JOB --session NAME",
		Short: "Wait for a call started with --no-wait and print its outcome",
		Long: `Wait for a call started with mcpi call --no-wait in a live session and
print its outcome, with its exit code, as the call would have: once it ends,
its output is printed and the job is forgotten. While it waits on another
server request of its own, result returns at once, exit 8, with that request
and how to answer it, as call --no-wait did.`,
		Example: "  mcpi call confirm --no-wait --session demo\n  mcpi answer 1 --elicit-field ok=true --session demo\n  mcpi result 1 --session demo",
		Args:    cobra.ExactArgs(1),
		RunE: command.CheckedRunE(func(cmd *cobra.Command, args []string) error {
			if _, err := fmt.Sscanf(args[0], "%d", &opts.Job); err != nil || opts.Job <= 0 {
				return command.FlagErrorf("give a job number, as call --no-wait printed it")
			}
			return sessionOnly(cmd, &opts.ConnOptions, args)
		}, opts, runF, resultRun),
	}
	command.AddJSONFlag(cmd, &opts.JSON, "print JSON while the call waits (its own output is as the call printed it)")
	return sessionOnlyVerb(cmd, &opts.ConnOptions)
}

func resultRun(ctx context.Context, opts *ResultOptions) error {
	id := opts.Job
	return opts.InSession(ctx, func(h *daemon.Held) error {
		j := h.Jobs().Get(id)
		if j == nil {
			return command.FlagErrorf("session %s has no job %d (a job is forgotten once its result was printed)", h.Name(), id)
		}
		code := awaitJob(ctx, h, j, opts.IO, opts.JSON, false)
		// What was printed is the call's, or the waiting document:
		// no error document follows it.
		opts.IO.MarkJSONWritten()
		if code != command.ExitOK {
			return command.ErrSilent{Code: code, Kind: jobKind(code), What: fmt.Sprintf("job %d ended with exit %d", id, code)}
		}
		return nil
	})
}

func jobKind(code command.ExitCode) string {
	if code == ExitWaiting {
		return command.KindServerRequest
	}
	return ""
}
