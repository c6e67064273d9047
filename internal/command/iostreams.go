package command

import "github.com/mcpi-dev/mcpi/internal/iostreams"

// IOStreams are a command's standard streams (internal/iostreams, as
// cli/cli keeps its pkg/iostreams apart from its commands).
type IOStreams = iostreams.IOStreams

// The constructors of the streams: over given readers and writers, the
// process's, and buffers for tests.
var (
	NewIOStreams = iostreams.New
	System       = iostreams.System
	Test         = iostreams.Test
)
