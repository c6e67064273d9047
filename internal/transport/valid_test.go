package transport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var validSeeds = []string{
	``, ` `, `{}`, `[]`, `[1,2]`, `{"a":1}`, `{"a":}`, `{"a" 1}`, `{,}`, `[1,]`, `[,1]`, `{"a":1,}`,
	`"abc"`, `"a\"b\\c\/d\b\f\n\r\t\u00e9\uD83D\uDE00"`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\tb\"", "\"\x7f\xff\"",
	`"unterminated`, `"ends in a backslash\`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-`, `1e`,
	`-1.25e-10`, `true`, `tru`, `truex`, `false`, `null`, `nul`, ` {"jsonrpc":"2.0","id":1,"result":{}} `, `{} {}`,
	`{"a":[{"b":[true,false,null]}]}`, `[[[[]]]]`, `{"a":1}x`, "\"0123456789abcdef0123456789\"", "\"01234567\x0189abcdef\"",
	"\"0123456789abcdef\\\"0123456789\"", `{"key with \" quote":"v"}`,
}

// FuzzValidJSON: ValidJSON agrees with json.Valid on every input.
func FuzzValidJSON(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := ValidJSON(data), json.Valid(data); got != want {
			t.Fatalf("ValidJSON(%q) = %v, json.Valid %v", data, got, want)
		}
	})
}

func TestValidJSON(t *testing.T) {
	for _, s := range validSeeds {
		if got, want := ValidJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("ValidJSON(%q) = %v, json.Valid %v", s, got, want)
		}
	}
	// encoding/json's nesting limit, in both kinds of container.
	for _, depth := range []int{maxNesting, maxNesting + 1} {
		for _, open := range []string{"[", `{"a":`} {
			close := map[string]string{"[": "]", `{"a":`: "}"}[open]
			s := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(close, depth))
			if got, want := ValidJSON(s), json.Valid(s); got != want {
				t.Errorf("depth %d of %s: ValidJSON %v, json.Valid %v", depth, open, got, want)
			}
		}
	}
	// Every position of a special byte inside a long string.
	for i := range 40 {
		for _, c := range []string{`"`, `\`, "\x1f", `\n`, "\x00"} {
			s := `"` + strings.Repeat("x", i) + c + strings.Repeat("y", 40-i) + `"`
			if got, want := ValidJSON([]byte(s)), json.Valid([]byte(s)); got != want {
				t.Errorf("ValidJSON(%q) = %v, json.Valid %v", s, got, want)
			}
		}
	}
}

func BenchmarkValidJSON(b *testing.B) {
	frames := map[string][]byte{
		"notification": []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"flood 12345"}}`),
		"50MB":         append(append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`), bytes.Repeat([]byte("x"), 50<<20)...), `"}]}}`...),
	}
	for name, f := range frames {
		b.Run(name+"/ValidJSON", func(b *testing.B) {
			b.SetBytes(int64(len(f)))
			for b.Loop() {
				ValidJSON(f)
			}
		})
		b.Run(name+"/json.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(f)))
			for b.Loop() {
				json.Valid(f)
			}
		})
	}
}
