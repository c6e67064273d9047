package answer

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/iostreams"
)

// Terminal asks the person at the terminal: a question on stderr, one
// line from stdin. It is not safe for concurrent use: its caller asks one
// question at a time.
type Terminal struct {
	io *iostreams.IOStreams
	in *bufio.Reader // made at the first question
}

// NewTerminal asks on ios.
func NewTerminal(ios *iostreams.IOStreams) *Terminal { return &Terminal{io: ios} }

// Ask prints question on stderr and reads one line from stdin, without its
// line ending; ctx ending gives up (the line left open is ended). A line
// cut by the end of stdin is an answer; no line at all is the read's
// error.
func (t *Terminal) Ask(ctx context.Context, question string) (string, error) {
	if t.in == nil {
		t.in = bufio.NewReader(t.io.In)
	}
	fmt.Fprint(t.io.ErrOut, question)
	type answer struct {
		s   string
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		s, err := t.in.ReadString('\n')
		ch <- answer{strings.TrimRight(s, "\r\n"), err}
	}()
	select {
	case a := <-ch:
		if a.err != nil && a.s == "" {
			return "", a.err
		}
		return a.s, nil
	case <-ctx.Done():
		fmt.Fprintln(t.io.ErrOut)
		return "", ctx.Err()
	}
}
