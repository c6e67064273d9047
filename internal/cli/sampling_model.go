package cli

import (
	"cmp"
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// addSamplingModelFlags declares --sampling-model and its URL,
// --sampling-model-url: a flag of its own, since mcpi chat's --model-url
// names its chat model's server, which may be another (it is the
// default).
func addSamplingModelFlags(cmd *cobra.Command, o *ConnOptions) {
	f := cmd.Flags()
	f.StringVar(&o.SamplingModel, "sampling-model", "", "answer sampling requests with this model, PROVIDER:MODEL (docs/models.md)")
	f.StringVar(&o.SamplingModelURL, "sampling-model-url", "", "the base URL of --sampling-model's provider (compat: requires one, e.g. http://127.0.0.1:8080/v1)")
}

// validateSamplingModel makes the model of --sampling-model: refused with
// --sampling-reply (one answer to sampling), or when its spec or key is
// wrong, before anything is sent to the server.
func (o *ConnOptions) validateSamplingModel() error {
	if o.SamplingModel == "" || o.sampler != nil {
		return nil
	}
	if o.SamplingReply != "" {
		return flagErrorf("--sampling-model and --sampling-reply both answer sampling: give one")
	}
	p, err := llm.Parse(o.SamplingModel, llm.Options{HTTPClient: transport.NewHTTPClient(o.Target.httpTransport, transport.EgressPolicy{}), BaseURL: cmp.Or(o.SamplingModelURL, o.ModelURL)})
	if err != nil {
		return flagErrorf("--sampling-model: %s", strings.ReplaceAll(err.Error(), "--model-url", "--sampling-model-url"))
	}
	o.sampler = &chat.Sampler{Model: p, Options: chat.SampleOptions{Timeout: o.Target.Timeout}}
	return nil
}

// tapSampling makes the model's turns events of the connection's tap (the
// trace, --otlp-endpoint, a session's tails), once: a session's restarted
// server goes on with the same tap.
func (o *ConnOptions) tapSampling(tap transport.Tap) {
	if o.sampler != nil && o.sampler.Options.Tap == nil {
		o.sampler.Options.Tap = tap
	}
}

// sessionSampler is how a live session's daemon answers the sampling
// requests no command answers and no person answers first: with
// session start's --sampling-model (nil without one).
func (o *ConnOptions) sessionSampler() func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if o.sampler == nil {
		return nil
	}
	return o.sampler.CreateMessage
}
