package iostreams

import (
	"encoding/json"
	"testing"
)

func TestEscapeUnsafeJSON(t *testing.T) {
	in := []byte("{\"a\":\"x\u202ey\u009b2J\u2028z é 日本\"}")
	got := string(EscapeUnsafe(in))
	want := `{"a":"x\u202ey\u009b2J\u2028z é 日本"}`
	if got != want {
		t.Errorf("EscapeUnsafe = %s, want %s", got, want)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(got), &v); err != nil || v["a"] != "x\u202ey\u009b2J\u2028z é 日本" {
		t.Errorf("the escaped JSON means something else: %v %q", err, v["a"])
	}
	plain := []byte(`{"a":"plain"}`)
	if out := EscapeUnsafe(plain); &out[0] != &plain[0] {
		t.Error("plain JSON was copied")
	}
}
