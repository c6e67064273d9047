package command

import (
	"cmp"
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// AddSamplingModelFlags declares --sampling-model and its URL,
// --sampling-model-url: a flag of its own, since mcpi chat's --model-url
// names its chat model's server, which may be another (it is the
// default).
func AddSamplingModelFlags(cmd *cobra.Command, o *ConnOptions) {
	f := cmd.Flags()
	f.StringVar(&o.SamplingModel, "sampling-model", "", "answer sampling requests with this model, PROVIDER:MODEL or a name of models.yaml (docs/models.md)")
	f.StringVar(&o.SamplingModelURL, "sampling-model-url", "", "the base URL of --sampling-model's provider (compat: requires one, e.g. http://127.0.0.1:8080/v1)")
}

// NewSamplingModel checks --sampling-approve and makes the model of
// --sampling-model when make says so: refused with --sampling-reply (one
// answer to sampling), or when its spec or key is wrong, before anything
// is sent to the server.
func (o *ConnOptions) NewSamplingModel(make bool) (*chat.Sampler, error) {
	switch o.SamplingApprove {
	case "", "ask":
	case "auto":
		if o.SamplingModel == "" {
			return nil, FlagErrorf("--sampling-approve auto sends a model's drafts: give the model, --sampling-model PROVIDER:MODEL")
		}
	default:
		return nil, FlagErrorf("invalid --sampling-approve %q: want ask or auto", o.SamplingApprove)
	}
	if o.SamplingModel == "" || !make {
		return nil, nil
	}
	if o.SamplingReply != "" {
		return nil, FlagErrorf("--sampling-model and --sampling-reply both answer sampling: give one")
	}
	s, err := o.newSampler(o.SamplingModel, nil)
	if err != nil {
		return nil, FlagErrorf("--sampling-model: %s", err)
	}
	return s, nil
}

// newSampler makes a sampler of model spec at --sampling-model-url (else
// the command's --model-url), bound by --timeout, its turns on tap (the
// connection's).
func (o *ConnOptions) newSampler(spec string, tap transport.Tap) (*chat.Sampler, error) {
	p, err := OpenModel(spec, cmp.Or(o.SamplingModelURL, o.ModelURL), o.Target.HTTPTransport)
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), "--model-url", "--sampling-model-url"))
	}
	return &chat.Sampler{Model: p, Options: chat.SampleOptions{Timeout: o.Target.Timeout, Tap: tap, Prices: ModelPrices()}}, nil
}

// TapSampling makes the model's turns events of the connection's tap (the
// trace, --otlp-endpoint, a session's tails), once: a session's restarted
// server goes on with the same tap.
func (r *ConnRun) TapSampling(tap transport.Tap) {
	if r.samplingTap == nil {
		r.samplingTap = tap
	}
	if r.Sampler != nil && r.Sampler.Options.Tap == nil {
		r.Sampler.Options.Tap = tap
	}
}

// SessionSampler is how a live session's daemon answers the sampling
// requests no command answers and no person answers first: with
// session start's --sampling-model (nil without one).
func (r *ConnRun) SessionSampler() func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if r.Sampler == nil {
		return nil
	}
	return r.Sampler.CreateMessage
}

// AddTUISamplingFlags declares the TUI's sampling model flags:
// --sampling-model drafts the replies, --sampling-approve says whether a
// person sends them.
func AddTUISamplingFlags(cmd *cobra.Command, o *ConnOptions) {
	AddSamplingModelFlags(cmd, o)
	cmd.Flags().StringVar(&o.SamplingApprove, "sampling-approve", "ask", "with --sampling-model: ask (the model's draft is shown for you to send, edit or refuse) or auto (sent unattended)")
}

// SessionModelTap is where the model turns of a live session's commands
// go: the session's connection's tap, once it connected.
func (r *ConnRun) SessionModelTap() transport.Tap { return r.samplingTap }

// ModelTap is where the model's events go: the connection's own tap (the
// trace of --record and --otlp-endpoint, -v).
func (r *ConnRun) ModelTap() transport.Tap {
	tap, _ := r.connTap(ConnHooks{}) // the trace is started already: no error is left to give
	return tap
}
