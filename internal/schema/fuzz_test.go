package schema

import (
	"encoding/json"
	"testing"
)

// FuzzCoerce: any text coerces to a value of an allowed type or fails with
// an error; it never panics, and a value it returns encodes as JSON.
func FuzzCoerce(f *testing.F) {
	s, err := Compile(json.RawMessage(toolSchema))
	if err != nil {
		f.Fatal(err)
	}
	props := s.Properties()
	for _, seed := range []string{"", "0", "1.5", "-1e999", "true", "null", `["a"]`, `{"x":1}`, "yes", "02134", "\x00", "\"quoted\""} {
		f.Add(seed, uint8(0))
	}
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		p := props[int(which)%len(props)]
		v, err := p.Coerce(text)
		if err != nil {
			return
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("%s=%q coerced to %#v, which does not encode: %v", p.Name, text, v, err)
		}
	})
}
