package command

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
// (its trace, its roots, its sampler) is the ConnRun with makes.
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

func AddConnFlags(cmd *cobra.Command, o *ConnOptions) {
	addTargetFlags(cmd, &o.Target)
	f := cmd.Flags()
	end := FlagGroup(cmd, GroupArgs)
	addRootFlag(f, o)
	f.StringVar(&o.SamplingReply, "sampling-reply", "", "answer sampling requests with this text, or @FILE holding a CreateMessageResult")
	AddSamplingModelFlags(cmd, o)
	f.StringVar(&o.Elicit, "elicit", "", "answer elicitation requests: accept, decline or cancel")
	f.StringArrayVar(&o.ElicitFields, "elicit-field", nil, "a field of an accepted elicitation, KEY=VALUE or KEY:=JSON (repeatable)")
	end()
	defer FlagGroup(cmd, GroupOutput)()
	f.BoolVar(&o.JSON, "json", false, "print JSON")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "show server stderr, notifications and transport events on stderr")
	addTraceFlags(f, o)
}

// AddHeldConnFlags declares the flags of a command that holds its
// connection for long (connect's TUI, a session's daemon): the target,
// --root and the sampling model's flags (sampling) among the arguments,
// and the trace's among the output flags, whose group it leaves open for
// the caller's own: end closes it.
func AddHeldConnFlags(cmd *cobra.Command, o *ConnOptions, sampling func(*cobra.Command, *ConnOptions)) (end func()) {
	addTargetFlags(cmd, &o.Target)
	f := cmd.Flags()
	end = FlagGroup(cmd, GroupArgs)
	addRootFlag(f, o)
	sampling(cmd, o)
	end()
	end = FlagGroup(cmd, GroupOutput)
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

// ConnHooks are what a command hears of its connection besides what its
// flags ask, and how it speaks to the server, where the flags do not say.
// The zero value: nothing more.
type ConnHooks struct {
	Handler  session.Handler            // overrides the CLI's answers (replay --verify, a session's daemon)
	Tap      transport.Tap              // one more tap (mcpi check, a session's daemon)
	Notified func(session.Notification) // sees every notification (a session's daemon)
	Warned   func(session.Warning)      // takes the warnings instead of stderr (mcpi check, a session's daemon)
	Client   *mcp.Implementation        // who mcpi says it is (replay --verify: the recorded host)
	Caps     *mcp.ClientCapabilities    // what it declares (replay --verify: the recorded host's)
	// MaxServerRequests bounds the server requests in progress (0: the
	// session's default); a session's daemon makes its parked requests'
	// budget the bound that counts.
	MaxServerRequests int
	// ConnectFailed takes a failure to connect, and returns the command's
	// error (mcpi check reports it its own way).
	ConnectFailed func(err error) error
	// ProbeTimeout bounds the era probe (0: the session's default); mcpi
	// check gives it the whole of --timeout.
	ProbeTimeout time.Duration
}

// With connects, runs fn, and closes the session and the run, whatever
// happens; with --json a failure is also printed as a JSON error object.
func (o *ConnOptions) With(ctx context.Context, fn func(*session.Client) error) error {
	return o.WithHooks(ctx, ConnHooks{}, fn)
}

// WithRun is with, for a command that reads what the run made (its
// trace, its -v).
func (o *ConnOptions) WithRun(ctx context.Context, fn func(*ConnRun) error) error {
	return o.NewRun().With(ctx, ConnHooks{}, fn)
}

// WithHooks is with, with hk's hooks on the connection (a command run in a
// live session has the session's).
func (o *ConnOptions) WithHooks(ctx context.Context, hk ConnHooks, fn func(*session.Client) error) error {
	return o.NewRun().With(ctx, hk, func(r *ConnRun) error { return fn(r.Client) })
}

// TraceOptions are how a trace of this command redacts.
func (o *ConnOptions) TraceOptions() record.Options {
	return record.Options{NoRedact: o.NoRedact, SecretValues: o.SecretValues()}
}

// SecretValues are the values no trace and no screen may show: a config
// entry's header values and the -e values whose name or length says secret.
func (o *ConnOptions) SecretValues() []string {
	secrets := append([]string(nil), o.Target.secrets...)
	for _, e := range o.Target.Env {
		if k, v, _ := strings.Cut(e, "="); record.IsSecretEnv(k, v) {
			secrets = append(secrets, v)
		}
	}
	return secrets
}

// Validate checks the flags that do not depend on the server.
func (o *ConnOptions) Validate() error {
	_, _, err := o.made(true)
	return err
}

// made checks the flags that do not depend on the server, and makes what
// they name: the roots, and the sampling model when sampler says so.
func (o *ConnOptions) made(sampler bool) ([]mcp.Root, *chat.Sampler, error) {
	switch o.Elicit {
	case "", mcp.ElicitAccept, mcp.ElicitDecline, mcp.ElicitCancel:
	default:
		return nil, nil, FlagErrorf("invalid --elicit %q: want accept, decline or cancel", o.Elicit)
	}
	for _, f := range o.ElicitFields {
		if k, _, _ := schema.SplitPair(f); !strings.Contains(f, "=") || k == "" {
			return nil, nil, FlagErrorf("invalid --elicit-field %q: want KEY=VALUE or KEY:=JSON", f)
		}
	}
	if len(o.ElicitFields) > 0 && o.Elicit == "" {
		o.Elicit = mcp.ElicitAccept
	}
	s, err := o.NewSamplingModel(sampler)
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

// FindTool looks the tool up so that arguments can be coerced and checked.
// A tool that is not listed is still called (servers may hide tools), with
// a warning. Pages after the tool's are not fetched: each is a round trip.
func (o *ConnOptions) FindTool(ctx context.Context, c *session.Client, name string) (*mcp.Tool, error) {
	if o.Held != nil {
		return o.Held.FindTool(ctx, c, name)
	}
	return c.FindTool(ctx, name)
}
