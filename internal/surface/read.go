package surface

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcpi-dev/mcpi/internal/record"
)

// MaxDocument bounds what Read takes of a snapshot document (a trace is
// read a line at a time and has no such bound).
const MaxDocument = 256 << 20

// Read reads a snapshot document or a trace, whichever r holds: a trace
// is JSON Lines whose first line is its header ("format":"mcpi-trace").
func Read(r io.Reader) (*Snapshot, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := br.ReadSlice('\n')
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, err
	}
	first = append([]byte(nil), first...)
	rest := io.MultiReader(bytes.NewReader(first), br)
	if isTraceHeader(first) {
		return FromTrace(rest)
	}
	b, err := io.ReadAll(io.LimitReader(rest, MaxDocument+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxDocument {
		return nil, fmt.Errorf("the snapshot is larger than %d MiB", MaxDocument>>20)
	}
	return Decode(b)
}

// isTraceHeader says whether line is a trace's header.
func isTraceHeader(line []byte) bool {
	var h struct {
		Type   string `json:"type"`
		Format string `json:"format"`
	}
	return json.Unmarshal(bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))), &h) == nil &&
		h.Type == record.TypeHeader && h.Format == record.Format
}
