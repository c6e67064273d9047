package iostreams

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/term"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// IOStreams are the standard streams of a command, with what is known of
// the terminal behind them.
//
// Out and ErrOut are the one way to a person: every byte written to them
// crosses safetext.Writer, which makes control characters, escape
// sequences and invisible characters visible, so no message, error or
// server text printed through them can drive the terminal. The raw streams
// are reachable only through Data (exact bytes of machine output: --json,
// and raw data to a non-terminal) and Terminal (the TUI, whose frames cross
// safetext.Screen); TestOutputBoundary keeps it that way. ErrOut also cuts
// each line at bounds.MaxLine and says how much it cut: a server decides
// what it sends, never how long an error, a warning or a -v line is.
type IOStreams struct {
	In     io.Reader
	Out    *safetext.Writer
	ErrOut *safetext.Writer

	out, errOut io.Writer
	// jsonWritten says a JSON document went to stdout: --json prints one.
	jsonWritten atomic.Bool
	// jsonStream says stdout is a stream of JSON Lines (tail --json): an
	// interrupt or an error ends it, and is no document of it.
	jsonStream atomic.Bool
	// jsonFailed says the command failed before its JSON document (an
	// answer its flags could not give): the document is not printed, the
	// error object is, so that stdout holds one document.
	jsonFailed atomic.Bool

	StdinTTY  bool
	StdoutTTY bool
	StderrTTY bool
	// Color is false under NO_COLOR or when stdout is not a terminal.
	Color bool
	// Dir is the directory the command runs in, when it is not the
	// process's: a live session's daemon runs commands given in other
	// directories. Every path a command is given goes through Path.
	Dir string
}

// WorkDir is Dir, for a nil IOStreams too.
func (s *IOStreams) WorkDir() string {
	if s == nil {
		return ""
	}
	return s.Dir
}

// Path resolves a path the user gave (a flag's @FILE, --save DIR, a root)
// against the command's directory.
func (s *IOStreams) Path(p string) string {
	if s == nil || s.Dir == "" || p == "" || filepath.IsAbs(p) || p == "~" || strings.HasPrefix(p, "~/") {
		return p
	}
	return filepath.Join(s.Dir, p)
}

// New returns streams over in, out and errOut.
func New(in io.Reader, out, errOut io.Writer) *IOStreams {
	s := &IOStreams{In: in, out: out, errOut: errOut, Out: safetext.NewWriter(out), ErrOut: safetext.NewWriter(errOut)}
	s.ErrOut.SetMaxLine(bounds.MaxLine)
	return s
}

// System returns the process's streams.
func System() *IOStreams {
	isTTY := func(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
	s := New(os.Stdin, os.Stdout, os.Stderr)
	s.StdinTTY, s.StdoutTTY, s.StderrTTY = isTTY(os.Stdin), isTTY(os.Stdout), isTTY(os.Stderr)
	_, noColor := os.LookupEnv("NO_COLOR")
	s.Color = s.StdoutTTY && !noColor && os.Getenv("TERM") != "dumb"
	return s
}

// Test returns streams backed by buffers: input, output, error output.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return New(in, out, errOut), in, out, errOut
}

// Data is standard output for machine output that must keep its exact
// bytes (--json to a pipe, raw data to a file). Text for a person goes to
// Out instead.
func (s *IOStreams) Data() io.Writer { return s.out }

// ErrData is standard error for bytes that crossed an ErrOut sink
// already: a live session's daemon runs the command and sends what its
// ErrOut wrote (sanitised there, with the terminal's line updates kept).
func (s *IOStreams) ErrData() io.Writer { return s.errOut }

// Terminal is standard output for the TUI, whose renderer writes its own
// control sequences and passes every frame through safetext.Screen.
func (s *IOStreams) Terminal() io.Writer { return s.out }

// Flush writes what the sinks hold back (a rune cut at the end of a write).
func (s *IOStreams) Flush() {
	s.Out.Flush()
	s.ErrOut.Flush()
}

// JSONWritten says a JSON document went to stdout: --json prints one.
func (s *IOStreams) JSONWritten() bool { return s.jsonWritten.Load() }

// MarkJSONWritten says a JSON document went to stdout by another way than
// this package's printers.
func (s *IOStreams) MarkJSONWritten() { s.jsonWritten.Store(true) }

// JSONStream says stdout is a stream of JSON Lines (tail --json): an
// interrupt or an error ends it, and is no document of it.
func (s *IOStreams) JSONStream() bool { return s.jsonStream.Load() }

// StartJSONStream says stdout is from now on a stream of JSON Lines.
func (s *IOStreams) StartJSONStream() { s.jsonStream.Store(true) }

// JSONFailed says the command failed before its JSON document: the
// printers then print nothing, and the error object takes its place.
func (s *IOStreams) JSONFailed() bool { return s.jsonFailed.Load() }

// FailJSON says the command failed before its JSON document.
func (s *IOStreams) FailJSON() { s.jsonFailed.Store(true) }
