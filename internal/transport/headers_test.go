package transport

import "testing"

func TestEncodeHeaderValue(t *testing.T) {
	// The spec's own examples (2026-07-28, Streamable HTTP, Value Encoding).
	for in, want := range map[string]string{
		"us-west1":           "us-west1",
		"Hello, 世界":          "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":       "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
		"tab\tinside":        "tab\tinside",
		"":                   "",
	} {
		if got := EncodeHeaderValue(in); got != want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", in, got, want)
		}
	}
}
