package check

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

const srcSSE = "MCP 2024-11-05 basic/transports § HTTP with SSE"

// sseEvent is one event of an SSE stream.
type sseEvent struct {
	name string // "" is "message"
	data string
}

// readEvents sends the events of an SSE stream to ch until it ends.
func readEvents(body io.Reader, ch chan<- sseEvent) {
	defer close(ch)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var ev sseEvent
	var data []string
	has := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if has {
				ev.data = strings.Join(data, "\n")
				ch <- ev
			}
			ev, data, has = sseEvent{}, nil, false
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.name, has = value, true
		case "data":
			data, has = append(data, value), true
		}
	}
}

// sseChecks opens the legacy HTTP+SSE stream itself and checks what a
// client relies on: the endpoint event first, on the same origin, a 2xx
// for each POST, and the answers as message events on the stream.
func (r *run) sseChecks() {
	t := r.opts.SSE
	if t == nil || t.URL == "" {
		return
	}
	client := transport.NewHTTPClient(nil, transport.EgressPolicy{UserHeaders: headerNames(t.Header)})
	ctx, cancel := context.WithTimeout(r.ctx, 2*r.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return
	}
	for k, v := range t.Header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("User-Agent", "mcpi-check")
	resp, err := client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	r.check(ruleSseEndpoint)
	subject := "GET " + t.URL
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		r.report(ruleSseEndpoint, subject, map[string]any{"status": resp.StatusCode, "Content-Type": resp.Header.Get("Content-Type")},
			"the GET was answered %d with Content-Type %q, not 200 with an event stream", resp.StatusCode, resp.Header.Get("Content-Type"))
		return
	}
	events := make(chan sseEvent, 16)
	go readEvents(resp.Body, events)
	next := func() (sseEvent, bool) {
		select {
		case ev, ok := <-events:
			return ev, ok
		case <-ctx.Done():
			return sseEvent{}, false
		}
	}
	first, ok := next()
	if !ok {
		r.report(ruleSseEndpoint, subject, nil, "the stream sent no event within %v: a client waits for the endpoint event before it can send anything", 2*r.opts.Timeout)
		return
	}
	if first.name != "endpoint" {
		r.report(ruleSseEndpoint, subject, map[string]string{"event": first.name, "data": clip(first.data, 200)},
			"the stream's first event is %q, not \"endpoint\": a client that reads the first event as the endpoint fails", orMessage(first.name))
		for first.name != "endpoint" {
			if first, ok = next(); !ok {
				r.report(ruleSseEndpoint, subject, nil, "the stream sent no endpoint event")
				return
			}
		}
	}
	base, _ := url.Parse(t.URL)
	ep, err := base.Parse(first.data)
	if err != nil || first.data == "" {
		r.report(ruleSseEndpoint, subject, map[string]string{"event": "endpoint", "data": first.data}, "the endpoint event's data is not a URI reference: %v", err)
		return
	}
	r.check(ruleSseEndpointOrigin)
	if ep.Scheme != base.Scheme || ep.Host != base.Host {
		r.report(ruleSseEndpointOrigin, subject, map[string]string{"event": "endpoint", "data": first.data},
			"the endpoint %s is on another origin than the stream (%s://%s): clients refuse to send their messages, and credentials, there", ep.Redacted(), base.Scheme, base.Host)
		return
	}
	r.ssePost(ctx, client, t, ep.String(), next)
}

func orMessage(name string) string {
	if name == "" {
		return "message"
	}
	return name
}

// ssePost POSTs an initialize to the endpoint and waits for its answer on
// the stream, checking every event that comes before it.
func (r *run) ssePost(ctx context.Context, client *http.Client, t *HTTPTarget, endpoint string, next func() (sseEvent, bool)) {
	r.check(ruleSsePostAccepted, ruleSseMessageEvents)
	const id = 7
	frame, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "initialize", "params": map[string]any{
		"protocolVersion": r.rev, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "mcpi-check", "version": "1"}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(frame))
	if err != nil {
		return
	}
	for k, v := range t.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mcpi-check")
	resp, err := client.Do(req)
	if err != nil {
		return
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	subject := "POST " + endpoint
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		r.report(ruleSsePostAccepted, subject, map[string]any{"status": resp.StatusCode, "body": clip(string(body), 200)},
			"an initialize POSTed to the endpoint was answered %d: clients take anything but 2xx (202 Accepted) as a failed send", resp.StatusCode)
		return
	}
	inBody := false
	if len(bytes.TrimSpace(body)) > 0 {
		var m mcp.Message
		inBody = json.Unmarshal(body, &m) == nil && string(m.ID) == fmt.Sprint(id)
	}
	bad := 0
	for {
		ev, ok := next()
		if !ok {
			what := "the answer to the initialize POSTed to the endpoint never came on the stream"
			if inBody {
				what += "; it came in the POST's body, where an HTTP+SSE client does not read"
			}
			r.report(ruleSsePostAccepted, subject, map[string]any{"status": resp.StatusCode, "body": clip(string(body), 200)}, "%s", what)
			return
		}
		var m mcp.Message
		switch {
		case ev.name != "" && ev.name != "message":
			if bad++; bad <= 3 {
				r.report(ruleSseMessageEvents, "GET "+t.URL, map[string]string{"event": ev.name, "data": clip(ev.data, 200)},
					"a server message came as a %q event, not \"message\": clients drop it", ev.name)
			}
			continue
		case json.Unmarshal([]byte(ev.data), &m) != nil || m.JSONRPC != "2.0":
			if bad++; bad <= 3 {
				r.report(ruleSseMessageEvents, "GET "+t.URL, map[string]string{"event": orMessage(ev.name), "data": clip(ev.data, 200)},
					"a message event's data is not one JSON-RPC message")
			}
			continue
		}
		if string(m.ID) == fmt.Sprint(id) {
			return
		}
	}
}
