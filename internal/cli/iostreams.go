package cli

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are the standard streams of a command, with what is known of
// the terminal behind them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	StdinTTY  bool
	StdoutTTY bool
	StderrTTY bool
	// Color is false under NO_COLOR or when stdout is not a terminal.
	Color bool
}

// System returns the process's streams.
func System() *IOStreams {
	isTTY := func(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
	s := &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdinTTY: isTTY(os.Stdin), StdoutTTY: isTTY(os.Stdout), StderrTTY: isTTY(os.Stderr),
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	s.Color = s.StdoutTTY && !noColor && os.Getenv("TERM") != "dumb"
	return s
}

// Test returns streams backed by buffers: input, output, error output.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}
