package mcptest

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// AppPage plays the host page of an MCP App mcpi hosts (internal/apphost),
// as its script does, without a browser: it reads the host's event stream
// and posts the App's messages.
type AppPage struct {
	t      testing.TB
	base   string
	client *http.Client
	events chan string
}

// OpenAppPage opens the event stream of the page at base (the host's URL,
// ending in "/"). The stream is closed when the test ends.
func OpenAppPage(t testing.TB, base string) *AppPage {
	t.Helper()
	p := &AppPage{t: t, base: base, client: transport.NewHTTPClient(nil, transport.EgressPolicy{}), events: make(chan string, 256)}
	resp, err := p.client.Get(base + "events")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the App page's events: %v %v", resp, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				p.events <- d
			}
		}
		close(p.events)
	}()
	return p
}

// Post sends a message of the App to the host.
func (p *AppPage) Post(msg string) {
	p.t.Helper()
	resp, err := p.client.Post(p.base+"app", "application/json", strings.NewReader(msg))
	if err != nil || resp.StatusCode != http.StatusNoContent {
		p.t.Fatalf("posting %.200s: %v %v", msg, resp, err)
	}
	resp.Body.Close()
}

// Wait returns the next event the host sends the page that holds want
// (any event for ""), skipping the others; the test fails when none comes
// within 20 s.
func (p *AppPage) Wait(want string) string {
	p.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case d, ok := <-p.events:
			if !ok {
				p.t.Fatalf("the event stream ended before %s", want)
			}
			if strings.Contains(d, want) {
				return d
			}
		case <-deadline:
			p.t.Fatalf("no event with %s", want)
		}
	}
}
