package command

import (
	"encoding/json"
	"errors"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// JSONErrorObject is what --json prints on stdout when a command fails. Its
// message is mcpi's, cut at bounds.MaxLine as on standard error; data is
// the server's error data, as it sent it.
type JSONErrorObject struct {
	Error struct {
		Message  string          `json:"message"`
		Kind     string          `json:"kind"`
		ExitCode ExitCode        `json:"exitCode"`
		Code     *int            `json:"code,omitempty"`
		Data     json.RawMessage `json:"data,omitempty"`
	} `json:"error"`
}

func jsonError(err error) JSONErrorObject {
	var o JSONErrorObject
	o.Error.Message = bounds.ClipTo(err.Error(), bounds.MaxLine)
	o.Error.ExitCode = ExitCodeFor(err)
	o.Error.Kind = ErrorKind(err)
	var re *mcp.RPCError
	if errors.As(err, &re) {
		code := re.Code
		o.Error.Code = &code
		o.Error.Data = re.Data
	}
	return o
}

// WithJSONError prints a JSON error object on stdout for --json, unless
// the command printed its JSON document already (--json prints exactly
// one), then returns err for the message on stderr and the exit code.
func WithJSONError(ios *IOStreams, asJSON bool, err error) error {
	if err != nil && asJSON && !ios.JSONWritten() && !ios.JSONStream() {
		if b, merr := json.Marshal(jsonError(err)); merr == nil {
			iostreams.WriteJSONDocument(ios, b)
		}
	}
	return err
}
