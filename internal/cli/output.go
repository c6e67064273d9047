package cli

import (
	"encoding/json"
	"errors"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// The printers the commands still in this file's old home call by these
// names (the others call internal/iostreams by its own).
var (
	writeJSON    = iostreams.WriteJSON
	escapeUnsafe = iostreams.EscapeUnsafe
)

// jsonErrorObject is what --json prints on stdout when a command fails. Its
// message is mcpi's, cut at bounds.MaxLine as on standard error; data is
// the server's error data, as it sent it.
type jsonErrorObject struct {
	Error struct {
		Message  string          `json:"message"`
		Kind     string          `json:"kind"`
		ExitCode ExitCode        `json:"exitCode"`
		Code     *int            `json:"code,omitempty"`
		Data     json.RawMessage `json:"data,omitempty"`
	} `json:"error"`
}

func jsonError(err error) jsonErrorObject {
	var o jsonErrorObject
	o.Error.Message = bounds.ClipTo(err.Error(), bounds.MaxLine)
	o.Error.ExitCode = exitCodeFor(err)
	o.Error.Kind = errorKind(err)
	var re *mcp.RPCError
	if errors.As(err, &re) {
		code := re.Code
		o.Error.Code = &code
		o.Error.Data = re.Data
	}
	return o
}
