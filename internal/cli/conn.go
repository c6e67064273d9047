package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/roots"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ConnOptions are the flags every command that talks to a server shares:
// the target, the answers to server requests, recording and verbosity,
// and what the factory gives it. They are input only: what a run makes
// (its trace, its roots, its sampler) is the connRun with makes.
type ConnOptions struct {
	IO     *IOStreams
	Target TargetOptions

	Roots         []string
	SamplingReply string
	// SamplingModel answers sampling with a model (PROVIDER:MODEL), at
	// SamplingModelURL, else at ModelURL: the URL of the command's own
	// model (mcpi chat's --model-url, which that command declares).
	SamplingModel    string
	SamplingModelURL string
	ModelURL         string
	// SamplingApprove is the TUI's --sampling-approve: ask (a person sends
	// the model's draft) or auto.
	SamplingApprove string
	Elicit          string
	ElicitFields    []string
	JSON            bool
	Verbose         bool
	Record          string
	NoRedact        bool
	// OTLPEndpoint is where the session's spans and duration metric go
	// as it runs (--otlp-endpoint): an OTLP/HTTP receiver.
	OTLPEndpoint string
	// Args is the command line, for the header of a trace.
	Args []string

	// Held is the live session the command runs in, inside its daemon,
	// and Slot the command's place there; RuntimeDir is where live
	// sessions are.
	Held       *daemon.Held
	Slot       *daemon.Slot
	RuntimeDir string
	// ReadsStdin says the command reads its standard input (call --args -):
	// run in a live session, it sends it along.
	ReadsStdin bool
}

func addConnFlags(cmd *cobra.Command, o *ConnOptions) {
	addTargetFlags(cmd, &o.Target)
	f := cmd.Flags()
	end := flagGroup(cmd, groupArgs)
	addRootFlag(f, o)
	f.StringVar(&o.SamplingReply, "sampling-reply", "", "answer sampling requests with this text, or @FILE holding a CreateMessageResult")
	addSamplingModelFlags(cmd, o)
	f.StringVar(&o.Elicit, "elicit", "", "answer elicitation requests: accept, decline or cancel")
	f.StringArrayVar(&o.ElicitFields, "elicit-field", nil, "a field of an accepted elicitation, KEY=VALUE or KEY:=JSON (repeatable)")
	end()
	defer flagGroup(cmd, groupOutput)()
	f.BoolVar(&o.JSON, "json", false, "print JSON")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "show server stderr, notifications and transport events on stderr")
	addTraceFlags(f, o)
}

// addHeldConnFlags declares the flags of a command that holds its
// connection for long (connect's TUI, a session's daemon): the target,
// --root and the sampling model's flags (sampling) among the arguments,
// and the trace's among the output flags, whose group it leaves open for
// the caller's own: end closes it.
func addHeldConnFlags(cmd *cobra.Command, o *ConnOptions, sampling func(*cobra.Command, *ConnOptions)) (end func()) {
	addTargetFlags(cmd, &o.Target)
	f := cmd.Flags()
	end = flagGroup(cmd, groupArgs)
	addRootFlag(f, o)
	sampling(cmd, o)
	end()
	end = flagGroup(cmd, groupOutput)
	addTraceFlags(f, o)
	return end
}

// addRootFlag declares --root.
func addRootFlag(f *pflag.FlagSet, o *ConnOptions) {
	f.StringArrayVar(&o.Roots, "root", nil, "a root to offer the server (a directory path or a URI; repeatable)")
}

// addTraceFlags declares the flags of the run's trace: --record,
// --no-redact and --otlp-endpoint.
func addTraceFlags(f *pflag.FlagSet, o *ConnOptions) {
	f.StringVar(&o.Record, "record", "", "write the session's wire traffic to this trace file (JSON Lines, secrets redacted)")
	f.BoolVar(&o.NoRedact, "no-redact", false, "with --record: keep secrets (Authorization headers, tokens, -e values) in the trace")
	addExportFlag(f, o)
}

// connHooks are what a command hears of its connection besides what its
// flags ask, and how it speaks to the server, where the flags do not say.
// The zero value: nothing more.
type connHooks struct {
	handler  session.Handler            // overrides the CLI's answers (replay --verify, a session's daemon)
	tap      transport.Tap              // one more tap (mcpi check, a session's daemon)
	notified func(session.Notification) // sees every notification (a session's daemon)
	warned   func(session.Warning)      // takes the warnings instead of stderr (mcpi check, a session's daemon)
	client   *mcp.Implementation        // who mcpi says it is (replay --verify: the recorded host)
	caps     *mcp.ClientCapabilities    // what it declares (replay --verify: the recorded host's)
	// maxServerRequests bounds the server requests in progress (0: the
	// session's default); a session's daemon makes its parked requests'
	// budget the bound that counts.
	maxServerRequests int
	// connectFailed takes a failure to connect, and returns the command's
	// error (mcpi check reports it its own way).
	connectFailed func(err error) error
	// probeTimeout bounds the era probe (0: the session's default); mcpi
	// check gives it the whole of --timeout.
	probeTimeout time.Duration
}

// with connects, runs fn, and closes the session and the run, whatever
// happens; with --json a failure is also printed as a JSON error object.
func (o *ConnOptions) with(ctx context.Context, fn func(*session.Client) error) error {
	return o.withHooks(ctx, connHooks{}, fn)
}

// withRun is with, for a command that reads what the run made (its
// trace, its -v).
func (o *ConnOptions) withRun(ctx context.Context, fn func(*connRun) error) error {
	return o.newRun().with(ctx, connHooks{}, fn)
}

// withHooks is with, with hk's hooks on the connection (a command run in a
// live session has the session's).
func (o *ConnOptions) withHooks(ctx context.Context, hk connHooks, fn func(*session.Client) error) error {
	return o.newRun().with(ctx, hk, func(r *connRun) error { return fn(r.client) })
}

// traceOptions are how a trace of this command redacts.
func (o *ConnOptions) traceOptions() record.Options {
	return record.Options{NoRedact: o.NoRedact, SecretValues: o.secretValues()}
}

// secretValues are the values no trace and no screen may show: a config
// entry's header values and the -e values whose name or length says secret.
func (o *ConnOptions) secretValues() []string {
	secrets := append([]string(nil), o.Target.secrets...)
	for _, e := range o.Target.Env {
		if k, v, _ := strings.Cut(e, "="); record.IsSecretEnv(k, v) {
			secrets = append(secrets, v)
		}
	}
	return secrets
}

// validate checks the flags that do not depend on the server.
func (o *ConnOptions) validate() error {
	_, _, err := o.made(true)
	return err
}

// made checks the flags that do not depend on the server, and makes what
// they name: the roots, and the sampling model when sampler says so.
func (o *ConnOptions) made(sampler bool) ([]mcp.Root, *chat.Sampler, error) {
	switch o.Elicit {
	case "", mcp.ElicitAccept, mcp.ElicitDecline, mcp.ElicitCancel:
	default:
		return nil, nil, flagErrorf("invalid --elicit %q: want accept, decline or cancel", o.Elicit)
	}
	for _, f := range o.ElicitFields {
		if k, _, _ := schema.SplitPair(f); !strings.Contains(f, "=") || k == "" {
			return nil, nil, flagErrorf("invalid --elicit-field %q: want KEY=VALUE or KEY:=JSON", f)
		}
	}
	if len(o.ElicitFields) > 0 && o.Elicit == "" {
		o.Elicit = mcp.ElicitAccept
	}
	s, err := o.samplingModel(sampler)
	if err != nil {
		return nil, nil, err
	}
	var rs []mcp.Root
	for _, r := range o.Roots {
		root, err := roots.ParseIn(r, o.IO.WorkDir())
		if err != nil {
			return nil, nil, &FlagError{Err: fmt.Errorf("invalid --root: %w", err)}
		}
		rs = append(rs, root)
	}
	return rs, s, nil
}
