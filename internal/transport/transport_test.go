package transport

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestServerExitErrorText(t *testing.T) {
	tests := []struct {
		err  ServerExitError
		want string
	}{
		{ServerExitError{ExitCode: 1}, "server exited with status 1"},
		{ServerExitError{ExitCode: 2, StderrTail: []string{"a", "b"}}, "server exited with status 2; stderr: b"},
		{ServerExitError{ExitCode: -1, Signal: "killed"}, "server killed by signal killed"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestHTTPErrorText(t *testing.T) {
	e := &HTTPError{Method: "POST", URL: "http://x/mcp", StatusCode: 500, Status: "500 Internal Server Error"}
	if got, want := e.Error(), "POST http://x/mcp: 500 Internal Server Error"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e.Body = []byte("oops")
	if got, want := e.Error(), "POST http://x/mcp: 500 Internal Server Error: oops"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e.Body = []byte(strings.Repeat("b", 1000))
	if got := e.Error(); !strings.HasSuffix(got, ": "+strings.Repeat("b", 160)+"…") {
		t.Errorf("long body not cut to 160 bytes: %d bytes", len(got))
	}
}

func TestIsUnauthorized(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&HTTPError{StatusCode: 401}, true},
		{&HTTPError{StatusCode: 403}, true},
		{fmt.Errorf("wrapped: %w", &HTTPError{StatusCode: 401}), true},
		{&HTTPError{StatusCode: 404}, false},
		{errors.New("401"), false},
		{nil, false},
	} {
		if got := IsUnauthorized(tt.err); got != tt.want {
			t.Errorf("IsUnauthorized(%v) = %v", tt.err, got)
		}
	}
}

func TestEnumStrings(t *testing.T) {
	for d, want := range map[Direction]string{Outgoing: "send", Incoming: "recv", 0: "?", 9: "?"} {
		if got := d.String(); got != want {
			t.Errorf("Direction(%d) = %q, want %q", d, got, want)
		}
	}
	for k, want := range map[EventKind]string{
		KindFrame: "frame", KindBadFrame: "bad-frame", KindStderr: "stderr",
		KindLifecycle: "lifecycle", KindHTTP: "http", 0: "?", 99: "?",
	} {
		if got := k.String(); got != want {
			t.Errorf("EventKind(%d) = %q, want %q", k, got, want)
		}
	}
}

func TestMultiTap(t *testing.T) {
	if MultiTap() != nil || MultiTap(nil, nil) != nil {
		t.Error("MultiTap of no taps is not nil")
	}
	a := newRecorder()
	if got := MultiTap(nil, a); got != Tap(a) {
		t.Errorf("MultiTap of one tap = %v, want that tap", got)
	}
	var order []string
	b := TapFunc(func(e Event) { order = append(order, "b:"+e.Text) })
	c := TapFunc(func(e Event) { order = append(order, "c:"+e.Text) })
	MultiTap(b, nil, c).Observe(Event{Text: "x"})
	if got := strings.Join(order, ","); got != "b:x,c:x" {
		t.Errorf("events reached %s", got)
	}
}

func TestTapper(t *testing.T) {
	tapper{}.emit(Event{Text: "no tap: no panic"})

	rec := newRecorder()
	before := time.Now()
	tapper{rec}.emit(Event{Text: "a"})
	fixed := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tapper{rec}.emit(Event{Text: "b", Time: fixed})
	evs := rec.all()
	if len(evs) != 2 || evs[0].Time.Before(before) || !evs[1].Time.Equal(fixed) {
		t.Errorf("events = %+v", evs)
	}
}

func TestHTTPMetaCopiesHeaders(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "http://x/mcp", nil)
	req.Header.Set("A", "1")
	resp := &http.Response{StatusCode: 202, Header: http.Header{"B": {"2"}}}
	m := httpMeta(req, resp)
	req.Header.Set("A", "changed")
	resp.Header.Set("B", "changed")
	if m.Method != "POST" || m.URL != "http://x/mcp" || m.StatusCode != 202 || m.RequestHeader.Get("A") != "1" || m.ResponseHeader.Get("B") != "2" {
		t.Errorf("meta = %+v", m)
	}
	if m := httpMeta(req, nil); m.StatusCode != 0 || m.ResponseHeader != nil {
		t.Errorf("meta without response = %+v", m)
	}
}

// An error body is one line: an HTML page by its title, text by its first
// line, cut.
func TestHTTPErrorBodyIsOneLine(t *testing.T) {
	page := []byte("<!DOCTYPE html>\n<html><head><title>404 Not\n Found</title></head><body>" + strings.Repeat("<p>x</p>\n", 500) + "</body></html>")
	e := &HTTPError{Method: "POST", URL: "http://h/mcp", Status: "404 Not Found", Header: http.Header{"Content-Type": {"text/html"}}, Body: page}
	if got, want := e.Error(), `POST http://h/mcp: 404 Not Found: an HTML page titled "404 Not Found"`; got != want {
		t.Errorf("HTML: %q, want %q", got, want)
	}
	e.Header, e.Body = nil, []byte("upstream failed\nstack trace follows\n"+strings.Repeat("y", 1000))
	if got, want := e.Error(), "POST http://h/mcp: 404 Not Found: upstream failed …"; got != want {
		t.Errorf("text: %q, want %q", got, want)
	}
	e.Body = []byte(strings.Repeat("z", 1000))
	if got := e.Error(); len(got) > 250 || strings.Contains(got, "\n") {
		t.Errorf("a long line is not cut: %d bytes", len(got))
	}
}
