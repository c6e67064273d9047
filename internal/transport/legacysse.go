package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// LegacySSE is a client connection over the HTTP+SSE transport of
// 2024-11-05: one long GET stream carries the server's messages, and the
// first event on it, "endpoint", names the URL every message is POSTed to.
type LegacySSE struct {
	tapper
	opts     HTTPOptions
	ctx      context.Context
	cancel   context.CancelFunc
	endpoint string
	frames   chan Frame
	done     chan struct{} // closed when the GET stream ends
	endErr   error
	once     sync.Once
}

// DialLegacySSE opens the GET stream and waits for the endpoint event.
func DialLegacySSE(ctx context.Context, opts HTTPOptions) (*LegacySSE, error) {
	opts.defaults()
	cctx, cancel := context.WithCancel(context.Background())
	s := &LegacySSE{
		tapper: tapper{opts.Tap},
		opts:   opts,
		ctx:    cctx,
		cancel: cancel,
		frames: make(chan Frame, 64),
		done:   make(chan struct{}),
	}
	req, err := http.NewRequestWithContext(withExchange(cctx), http.MethodGet, opts.URL, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, vs := range opts.Header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	resp, err := opts.client.Do(req)
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("GET %s: %w", opts.URL, bareNetError(err))
	}
	meta := httpMeta(req, resp)
	if resp.StatusCode != http.StatusOK || !isEventStream(resp.Header.Get("Content-Type")) {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		cancel()
		s.emit(Event{Kind: KindHTTP, Data: body, HTTP: meta, Text: resp.Status})
		status := resp.Status
		if resp.StatusCode == http.StatusOK {
			status += " (not an event stream)"
		}
		return nil, &HTTPError{Method: http.MethodGet, URL: opts.URL, StatusCode: resp.StatusCode, Status: status, Header: resp.Header, Body: body}
	}
	s.emit(Event{Kind: KindHTTP, HTTP: meta, Text: resp.Status + ": SSE stream opened"})
	r := newSSEReader(resp.Body, opts.MaxFrameBytes)
	for {
		ev, err := r.Next()
		if err != nil {
			resp.Body.Close()
			cancel()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("SSE stream from %s ended before the endpoint event: %w", opts.URL, err)
		}
		if ev.Event != "endpoint" {
			s.emit(Event{Kind: KindBadFrame, Dir: Incoming, Data: ev.Data, Err: fmt.Sprintf("event %q before the endpoint event", ev.Event), HTTP: meta})
			continue
		}
		base, _ := url.Parse(opts.URL)
		ep, err := base.Parse(string(ev.Data))
		if err != nil {
			resp.Body.Close()
			cancel()
			return nil, fmt.Errorf("bad endpoint event %q: %w", ev.Data, err)
		}
		// The endpoint receives every message with the user's headers
		// (Authorization among them): it must be the server's own origin.
		if ep.Scheme != base.Scheme || ep.Host != base.Host {
			resp.Body.Close()
			cancel()
			return nil, fmt.Errorf("the endpoint event names %s, on another origin than %s://%s: refused", ep.Redacted(), base.Scheme, base.Host)
		}
		s.endpoint = ep.String()
		s.emit(Event{Kind: KindLifecycle, Text: "endpoint: " + s.endpoint, HTTP: meta})
		break
	}
	go s.read(resp, r, meta)
	return s, nil
}

// Endpoint returns the URL messages are POSTed to.
func (s *LegacySSE) Endpoint() string { return s.endpoint }

func (s *LegacySSE) read(resp *http.Response, r *sseReader, meta *HTTPMeta) {
	defer close(s.done)
	defer resp.Body.Close()
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the server closed the SSE stream")
			}
			s.endErr = err
			if s.ctx.Err() == nil {
				s.emit(Event{Kind: KindLifecycle, Text: "SSE stream ended", Err: err.Error(), HTTP: meta})
			}
			return
		}
		if !ev.HasData {
			continue
		}
		m := *meta
		m.SSEEventID, m.SSEEvent = ev.ID, ev.Event
		f := Frame{Data: ev.Data, EventID: ev.ID, Err: checkFrame(ev.Data)}
		if ev.Event != "" && ev.Event != "message" && f.Err == nil {
			f.Err = fmt.Errorf("unexpected SSE event type %q", ev.Event)
		}
		if f.Err != nil {
			s.emit(Event{Kind: KindBadFrame, Dir: Incoming, Data: f.Data, Err: f.Err.Error(), HTTP: &m})
		} else {
			s.emit(Event{Kind: KindFrame, Dir: Incoming, Data: f.Data, HTTP: &m})
		}
		select {
		case s.frames <- f:
		case <-s.ctx.Done():
			return
		}
	}
}

// Send POSTs one frame to the endpoint.
func (s *LegacySSE) Send(ctx context.Context, frame []byte) error {
	if s.ctx.Err() != nil {
		return ErrClosed
	}
	req, err := http.NewRequestWithContext(withExchange(ctx), http.MethodPost, s.endpoint, bytesReader(frame))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range s.opts.Header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	s.emit(Event{Kind: KindFrame, Dir: Outgoing, Data: frame, HTTP: httpMeta(req, nil)})
	resp, err := s.opts.client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", s.endpoint, bareNetError(err))
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	s.emit(Event{Kind: KindHTTP, HTTP: httpMeta(req, resp), Text: resp.Status})
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &HTTPError{Method: http.MethodPost, URL: s.endpoint, StatusCode: resp.StatusCode, Status: resp.Status, Header: resp.Header, Body: body}
	}
	return nil
}

// Recv returns the next message from the GET stream.
func (s *LegacySSE) Recv() (Frame, error) {
	select {
	case f := <-s.frames:
		return f, nil
	case <-s.ctx.Done():
		return Frame{}, ErrClosed
	case <-s.done:
		select {
		case f := <-s.frames:
			return f, nil
		default:
		}
		if s.ctx.Err() != nil {
			return Frame{}, ErrClosed
		}
		return Frame{}, s.endErr
	}
}

// Close closes the GET stream.
func (s *LegacySSE) Close() error {
	s.once.Do(func() {
		s.cancel()
		<-s.done
		s.emit(Event{Kind: KindLifecycle, Text: "closed"})
	})
	return nil
}

// Name names the transport.
func (s *LegacySSE) Name() string { return "sse" }
