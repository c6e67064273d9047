package tracectx

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	c, err := Parse(good, "rojo=00f067aa0ba902b7")
	if err != nil || c.TraceParent() != good || c.State != "rojo=00f067aa0ba902b7" || c.Flags != 1 {
		t.Fatalf("%v %+v", err, c)
	}
	child := c.Child()
	if child.TraceID != c.TraceID || child.SpanID == c.SpanID || !strings.HasPrefix(child.TraceParent(), "00-4bf92f3577b34da6a3ce929d0e0e4736-") {
		t.Errorf("child %s", child.TraceParent())
	}
	if c, err := Parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", ""); err != nil || c.Flags != 1 {
		t.Errorf("a later version with more fields: %v", err)
	}
	for _, bad := range []string{
		"", "garbage", strings.Repeat("a", 10<<10),
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
	} {
		if _, err := Parse(bad, ""); err == nil {
			t.Errorf("%.60q parsed", bad)
		}
	}
	// A tracestate too long or not printable is left out, not the context.
	c, err = Parse(good, strings.Repeat("k=v,", 200))
	if err != nil || c.State != "" {
		t.Errorf("long tracestate: %v %q", err, c.State)
	}
	c, _ = Parse(good, "a=b\x1b[31m")
	if c.State != "" {
		t.Errorf("tracestate with an escape kept: %q", c.State)
	}
}
