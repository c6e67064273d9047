package rows

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// FuzzParserEvent: whatever a server sends, parsing it for a row never
// panics, the row keeps the frame's size, and its label is valid UTF-8 when
// the frame is.
func FuzzParserEvent(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}`,
		`[{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"a://b"}},{"jsonrpc":"2.0","method":"x"}]`,
		`{"jsonrpc":"2.0","id":"s","error":{"code":1,"message":"m"}}`,
		`{"method":"\u0074ools/call","params":{"name":"\ud800"}}`,
		`{"id":null,"result":null}`,
		`not json`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := NewParser()
		for _, dir := range []transport.Direction{transport.Outgoing, transport.Incoming} {
			en := p.Event(transport.Event{Time: time.Unix(1, 0), Kind: transport.KindFrame, Dir: dir, Data: data})
			if en.Size != len(data) {
				t.Fatalf("size %d, want %d", en.Size, len(data))
			}
			if l := en.Label(); !utf8.ValidString(l) && utf8.Valid(data) {
				t.Fatalf("label %q of valid UTF-8 is not", l)
			}
		}
	})
}
