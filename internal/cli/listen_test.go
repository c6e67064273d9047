package cli

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
)

// The listeners of replay --serve --http and proxy --listen (serveHTTP on
// a loopback listener) refuse a Host or an Origin that does not name this
// machine, with 403.
func TestServeHTTPChecksHostAndOrigin(t *testing.T) {
	ln, err := listen("127.0.0.1:0", "--http", true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serveHTTP(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.As(err, new(command.ErrSilent)) {
			t.Error(err)
		}
	}()
	url := "http://" + ln.Addr().String() + "/"
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"", "", http.StatusOK},
		{"localhost", "http://localhost:6274", http.StatusOK},
		{"attacker.example", "", http.StatusForbidden},
		{"", "http://attacker.example", http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q Origin %q: %d, want %d", tc.host, tc.origin, resp.StatusCode, tc.want)
		}
	}
}
