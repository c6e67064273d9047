package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// sessionOnly checks, outside a session's daemon, that a command that
// has no meaning outside a live session was given one, and no server.
func sessionOnly(cmd *cobra.Command, o *command.ConnOptions, args []string) error {
	if o.Held != nil {
		return nil
	}
	if err := needsSession(cmd, args); err != nil {
		return err
	}
	if !o.Target.UseSession(cmd, nil) {
		return command.FlagErrorf("mcpi %s runs in a live session: give --session NAME or set $%s (mcpi session start NAME TARGET starts one)", strings.TrimPrefix(cmd.CommandPath(), "mcpi "), command.SessionEnv)
	}
	return o.Target.CheckSession(cmd)
}

// sessionRunE is the RunE of a command that runs in a live session only:
// sessionOnly, then the options handed on as RunE does.
func sessionRunE[T any](o *command.ConnOptions, opts T, runF, run func(context.Context, T) error) func(*cobra.Command, []string) error {
	return command.CheckedRunE(func(cmd *cobra.Command, args []string) error { return sessionOnly(cmd, o, args) }, opts, runF, run)
}

// PendingOptions are the input of `mcpi pending`.
type PendingOptions struct {
	command.ConnOptions
}

// NewCmdPending returns `mcpi pending`.
func NewCmdPending(f *command.Factory, runF func(context.Context, *PendingOptions) error) *cobra.Command {
	opts := &PendingOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "pending --session NAME",
		Short: "List the server requests waiting for an answer in a live session",
		Long: `List the server requests waiting for an answer in a live session.

A sampling or elicitation request that no command under way can answer
(it gave no --sampling-reply or --elicit) waits in the session: the command
whose call it holds up says so on stderr, and mcpi answer answers it.`,
		Example: "  mcpi pending --session demo\n  mcpi pending --session demo --json",
		Args:    cobra.NoArgs,
		RunE:    sessionRunE(&opts.ConnOptions, opts, runF, pendingRun),
	}
	command.AddJSONFlag(cmd, &opts.JSON, "print JSON")
	return sessionOnlyVerb(cmd, &opts.ConnOptions)
}

func pendingRun(ctx context.Context, opts *PendingOptions) error {
	return opts.InSession(ctx, func(h *daemon.Held) error {
		return mcptext.WritePending(opts.IO, opts.JSON, h.Board())
	})
}

// AnswerOptions are the input of `mcpi answer`: the answer is the one
// the embedded flags (--sampling-reply, --elicit, --elicit-field) give,
// or Decline or Cancel.
type AnswerOptions struct {
	command.ConnOptions
	ID      int
	Decline bool
	Cancel  bool
}

// NewCmdAnswer returns `mcpi answer ID`.
func NewCmdAnswer(f *command.Factory, runF func(context.Context, *AnswerOptions) error) *cobra.Command {
	opts := &AnswerOptions{ConnOptions: f.Conn()}
	cmd := &cobra.Command{
		Use:   "answer ID --session NAME",
		Short: "Answer a server request waiting in a live session",
		Long: `Answer a server request waiting in a live session (see mcpi pending).

A sampling request takes --sampling-reply, an elicitation --elicit and
--elicit-field, as when a command answers them itself, with the same checks
of the form's fields; --decline and --cancel refuse either (a refused
sampling request gets the error "user rejected the request").`,
		Example: "  mcpi answer 1 --sampling-reply 'Paris' --session demo\n  mcpi answer 2 --elicit-field name=Ada --session demo\n  mcpi answer 3 --decline --session demo",
		Args: func(_ *cobra.Command, args []string) error {
			return opts.parse(args)
		},
		RunE: sessionRunE(&opts.ConnOptions, opts, runF, answerRun),
	}
	fl := cmd.Flags()
	end := command.FlagGroup(cmd, command.GroupArgs)
	fl.StringVar(&opts.SamplingReply, "sampling-reply", "", "answer a sampling request with this text, or @FILE holding a CreateMessageResult")
	fl.StringVar(&opts.Elicit, "elicit", "", "answer an elicitation: accept, decline or cancel")
	fl.StringArrayVar(&opts.ElicitFields, "elicit-field", nil, "a field of an accepted elicitation, KEY=VALUE or KEY:=JSON (repeatable)")
	fl.BoolVar(&opts.Decline, "decline", false, "decline the request")
	fl.BoolVar(&opts.Cancel, "cancel", false, "cancel the request (an elicitation's cancel; sampling: as --decline)")
	end()
	end = command.FlagGroup(cmd, command.GroupOutput)
	fl.BoolVar(&opts.JSON, "json", false, "print JSON")
	end()
	return sessionOnlyVerb(cmd, &opts.ConnOptions)
}

// parse reads the ID and checks that exactly one answer is given.
func (opts *AnswerOptions) parse(args []string) error {
	if len(args) != 1 {
		return command.FlagErrorf("give one ID (mcpi pending lists them)")
	}
	id, err := strconv.Atoi(strings.TrimPrefix(args[0], "#"))
	if err != nil || id <= 0 {
		return command.FlagErrorf("invalid ID %q: want the number mcpi pending shows", args[0])
	}
	opts.ID = id
	if err := opts.Validate(); err != nil {
		return err
	}
	given := 0
	for _, b := range []bool{opts.Decline, opts.Cancel, opts.SamplingReply != "", opts.Elicit != ""} {
		if b {
			given++
		}
	}
	switch {
	case given == 0:
		return command.FlagErrorf("give the answer: --sampling-reply, --elicit, --elicit-field, --decline or --cancel")
	case given > 1:
		return command.FlagErrorf("give one answer: --sampling-reply, --elicit (with --elicit-field), --decline or --cancel")
	}
	return nil
}

func answerRun(ctx context.Context, opts *AnswerOptions) error {
	return opts.InSession(ctx, func(h *daemon.Held) error {
		return answerParked(ctx, &opts.ConnOptions, h, opts.ID, opts.Decline, opts.Cancel)
	})
}

func answerParked(ctx context.Context, o *command.ConnOptions, h *daemon.Held, id int, decline, cancel bool) error {
	p := h.Board().Get(id)
	if p == nil {
		return command.FlagErrorf("no server request #%d is waiting in session %s (mcpi pending --session %s lists them)", id, h.Name(), h.Name())
	}
	var errOut sync.Mutex
	ch := o.NewRun().Handler(func(format string, args ...any) {
		errOut.Lock()
		defer errOut.Unlock()
		fmt.Fprintf(o.IO.ErrOut, format+"\n", args...)
	})
	var a struct {
		result any
		err    error
	}
	switch {
	case p.Sampling != nil:
		switch {
		case o.Elicit != "":
			return command.FlagErrorf("server request #%d is %s: answer it with --sampling-reply, --decline or --cancel", id, p.Method)
		case decline, cancel:
			a.err = session.ErrRejected
		default:
			a.result, a.err = ch.CreateMessage(ctx, p.Sampling)
			if a.err != nil {
				// @FILE unreadable or not a CreateMessageResult: the
				// request keeps waiting for a good answer.
				return command.FlagErrorf("--sampling-reply: %v", a.err)
			}
		}
	case p.Elicit != nil:
		switch {
		case o.SamplingReply != "":
			return command.FlagErrorf("server request #%d is %s: answer it with --elicit, --elicit-field, --decline or --cancel", id, p.Method)
		case decline:
			a.result = &mcp.ElicitResult{Action: mcp.ElicitDecline}
		case cancel:
			a.result = &mcp.ElicitResult{Action: mcp.ElicitCancel}
		case o.Elicit == mcp.ElicitAccept && p.Elicit.Mode != "url":
			s, err := schema.Compile(p.Elicit.RequestedSchema, schema.AssertFormats())
			if err != nil {
				a.result, a.err = ch.Elicit(ctx, p.Elicit)
				break
			}
			values, err := ch.Fields(s)
			if err != nil {
				return command.FlagErrorf("server request #%d: %v", id, err)
			}
			a.result = &mcp.ElicitResult{Action: mcp.ElicitAccept, Content: values}
		default:
			a.result, a.err = ch.Elicit(ctx, p.Elicit)
		}
	}
	if !h.Board().Answer(id, a.result, a.err) {
		return fmt.Errorf("%w: server request #%d was answered or withdrawn meanwhile", command.ErrConnect, id)
	}
	if o.JSON {
		return iostreams.WriteJSON(o.IO, map[string]any{"id": id, "kind": p.Method, "answered": true})
	}
	fmt.Fprintf(o.IO.ErrOut, "Answered server request #%d (%s).\n", id, p.Method)
	return nil
}
