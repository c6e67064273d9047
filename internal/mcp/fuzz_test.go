package mcp

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeFrame: any bytes decode or fail cleanly; what decodes
// re-encodes, and IDKey never panics on the ids it finds.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x"}}]`,
		`[]`, `[null]`, `{}`, `null`, `"s"`, `{"id":1.5e300}`, `{"id":-0}`, `{"id":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, _, err := DecodeFrame(data)
		if err != nil {
			return
		}
		for _, m := range msgs {
			if m == nil {
				t.Fatal("nil message in a decoded frame")
			}
			IDKey(m.ID)
			m.IsRequest()
			m.IsResponse()
			m.IsNotification()
			if _, err := json.Marshal(m); err != nil {
				t.Fatalf("a decoded message does not encode: %v", err)
			}
		}
	})
}

func TestIDKey(t *testing.T) {
	for in, want := range map[string]string{`1`: "1", `"1"`: `"1"`, `1.0`: "1.0", `-3`: "-3", `null`: "", `true`: "", `"a\"b"`: `"a\"b"`} {
		got, _ := IDKey(json.RawMessage(in))
		if got != want {
			t.Errorf("IDKey(%s) = %q, want %q", in, got, want)
		}
	}
}
