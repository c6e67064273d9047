package command

import (
	"github.com/mcpi-dev/mcpi/internal/answer"
	"github.com/mcpi-dev/mcpi/internal/chat"
)

// Handler answers the server's requests as the run's flags say, else on
// the terminal; say writes a line on the command's stderr.
func (r *ConnRun) Handler(say func(format string, args ...any)) *answer.Handler {
	return answer.New(answer.Options{
		IO: r.IO,
		// Read at each request: prepare makes the roots and the model
		// when the run connects, which may be after its handler is made.
		Flags: func() answer.Flags {
			return answer.Flags{Roots: r.MadeRoots, Sampler: r.Sampler, SamplingReply: r.SamplingReply, Elicit: r.Elicit, ElicitFields: r.ElicitFields}
		},
		Say:     say,
		Verbose: func(format string, args ...any) { r.SayVerbose(format, args...) },
		Failed:  r.answerFailed,
		Model:   func(spec string) (*chat.Sampler, error) { return r.newSampler(spec, r.samplingTap) },
	})
}
