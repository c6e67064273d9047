package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var splitSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":"a","result":{}}`,
	` { "jsonrpc" : "2.0" , "id" : 1 , "result" : { "content" : [ { "type" : "text" , "text" : "a\"b\\\\" } ] } } `,
	`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x","data":[1,{"a":"}"}]}}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"flood 1"}}`,
	`{"id":null,"result":null,"params":null,"error":null,"method":null,"jsonrpc":null}`,
	`{"method":"a","method":"b"}`, `{"METHOD":"c"}`, `{"method":"\u0061"}`, `{"error":{"code":"x"}}`,
	`{"error":{"code":1},"error":{"message":"x"}}`, `{"result":1e3,"id":-0.5}`, `{"id":true}`,
	`{"other":1}`, `{}`, `[]`, `null`, `"s"`, `{"id":1}x`, `{"id":1,}`, `{"id" 1}`, `{"a\"":1}`,
	"{\"method\":\"\xff\"}", `{"result":"\\\"}"}`, `{"result":[[[]]],"id":0}`,
}

// FuzzDecodeSplit: whenever decodeSplit decodes a valid frame, it decodes
// it as json.Unmarshal does; DecodeFrame and DecodeValidFrame agree with
// json.Unmarshal on every frame; decodeSplit ends on any input.
func FuzzDecodeSplit(f *testing.F) {
	for _, s := range splitSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeSplit(data, true) // must end, and not panic, on anything
		var want Message
		werr := json.Unmarshal(data, &want)
		if json.Valid(data) {
			for _, share := range []bool{false, true} {
				if got, ok := decodeSplit(data, share); ok {
					if werr != nil {
						t.Fatalf("decodeSplit(%q) decoded what json.Unmarshal refuses: %v", data, werr)
					}
					if !reflect.DeepEqual(*got, want) {
						t.Fatalf("decodeSplit(%q) = %+v, json.Unmarshal = %+v", data, *got, want)
					}
				}
			}
		}
		decoders := map[string]func([]byte) ([]*Message, bool, error){"DecodeFrame": DecodeFrame}
		if json.Valid(data) {
			decoders["DecodeValidFrame"] = DecodeValidFrame
		}
		trimmed := strings.TrimLeft(string(data), " \t\r\n")
		if strings.HasPrefix(trimmed, "[") {
			return // batches take json.Unmarshal's path whole
		}
		for name, decode := range decoders {
			msgs, _, err := decode(data)
			if (err != nil) != (werr != nil) {
				t.Fatalf("%s(%q): error %v, json.Unmarshal's %v", name, data, err, werr)
			}
			if err == nil && !reflect.DeepEqual(*msgs[0], want) {
				t.Fatalf("%s(%q) = %+v, json.Unmarshal = %+v", name, data, *msgs[0], want)
			}
		}
	})
}

// TestDecodeSplitTakesTheFastPath checks that the frames mcpi receives most
// (responses and notifications as servers write them) do not fall back to
// json.Unmarshal, which would make the fast path pointless.
func TestDecodeSplitTakesTheFastPath(t *testing.T) {
	for _, s := range splitSeeds[:5] {
		if _, ok := decodeSplit([]byte(s), true); !ok {
			t.Errorf("decodeSplit(%s) fell back", s)
		}
	}
}

func TestDecodeValidFrameShares(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"result":{"a":1}}`)
	msgs, _, err := DecodeValidFrame(data)
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(string(data), `{"a"`)
	if r := msgs[0].Result; &r[0] != &data[at] || cap(r) != len(r) {
		t.Errorf("the result is a copy, or may grow into the frame: %q", r)
	}
}

// FuzzMemberString: whenever MemberString answers, json.Unmarshal decodes
// the same value into a field of that name; whenever MemberRaw answers
// on valid JSON, the same bytes into a json.RawMessage field.
func FuzzMemberString(f *testing.F) {
	for _, s := range []string{
		`{"resultType":"complete","content":[{"type":"text","text":"x"}]}`,
		`{"content":[],"resultType":"input_required","inputRequests":{}}`,
		`{"RESULTTYPE":"a","resultType":"b"}`, `{"resultType":"a","ResultType":"b"}`, `{"resultType":null}`,
		`{"result\u0054ype":"input_required"}`, `{"reſultType":"x"}`, `{"resultType":1}`, `{}`, `[]`, `{"a":{"resultType":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if raw, ok := MemberRaw(data, "resultType"); ok && json.Valid(data) {
			var want struct {
				ResultType json.RawMessage `json:"resultType"`
			}
			if err := json.Unmarshal(data, &want); err == nil && !bytes.Equal(raw, want.ResultType) {
				t.Fatalf("MemberRaw(%q) = %q, json.Unmarshal %q", data, raw, want.ResultType)
			}
		}
		got, ok := MemberString(data, "resultType")
		if !ok || !json.Valid(data) {
			return
		}
		var want struct {
			ResultType string `json:"resultType"`
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("MemberString(%q) = %q, but json.Unmarshal fails: %v", data, got, err)
		}
		if got != want.ResultType {
			t.Fatalf("MemberString(%q) = %q, json.Unmarshal %q", data, got, want.ResultType)
		}
	})
}
