package transport

import "testing"

// A LateTap drops what comes before a tap is set and after it is cleared,
// and passes the rest to the tap set at the time.
func TestLateTap(t *testing.T) {
	var l LateTap
	var a, b []string
	l.Observe(Event{Text: "before"})
	l.Set(TapFunc(func(e Event) { a = append(a, e.Text) }))
	l.Observe(Event{Text: "to a"})
	l.Set(TapFunc(func(e Event) { b = append(b, e.Text) }))
	l.Observe(Event{Text: "to b"})
	l.Set(nil)
	l.Observe(Event{Text: "after"})
	if len(a) != 1 || a[0] != "to a" || len(b) != 1 || b[0] != "to b" {
		t.Errorf("a %q, b %q", a, b)
	}
}
