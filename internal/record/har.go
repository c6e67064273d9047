package record

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// HAR is an HTTP Archive (1.2) built from the HTTP exchanges of a trace, for
// browser and HTTP tooling.
type HAR struct {
	Log HARLog `json:"log"`
}

// HARLog is the log of a HAR.
type HARLog struct {
	Version string     `json:"version"`
	Creator HARCreator `json:"creator"`
	Entries []HAREntry `json:"entries"`
	Comment string     `json:"comment,omitempty"`
}

// HARCreator names the program that made the HAR.
type HARCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// HAREntry is one HTTP exchange.
type HAREntry struct {
	StartedDateTime string      `json:"startedDateTime"`
	Time            float64     `json:"time"`
	Request         HARRequest  `json:"request"`
	Response        HARResponse `json:"response"`
	Cache           struct{}    `json:"cache"`
	Timings         HARTimings  `json:"timings"`
	Comment         string      `json:"comment,omitempty"`
}

// HARRequest is the request of an entry.
type HARRequest struct {
	Method      string         `json:"method"`
	URL         string         `json:"url"`
	HTTPVersion string         `json:"httpVersion"`
	Headers     []HARNameValue `json:"headers"`
	QueryString []HARNameValue `json:"queryString"`
	Cookies     []HARNameValue `json:"cookies"`
	HeadersSize int            `json:"headersSize"`
	BodySize    int            `json:"bodySize"`
	PostData    *HARPostData   `json:"postData,omitempty"`
}

// HARResponse is the response of an entry.
type HARResponse struct {
	Status      int            `json:"status"`
	StatusText  string         `json:"statusText"`
	HTTPVersion string         `json:"httpVersion"`
	Headers     []HARNameValue `json:"headers"`
	Cookies     []HARNameValue `json:"cookies"`
	Content     HARContent     `json:"content"`
	RedirectURL string         `json:"redirectURL"`
	HeadersSize int            `json:"headersSize"`
	BodySize    int            `json:"bodySize"`
}

// HARNameValue is a header or query parameter.
type HARNameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// HARPostData is a request body.
type HARPostData struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

// HARContent is a response body.
type HARContent struct {
	Size     int    `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text,omitempty"`
}

// HARTimings are the phases of an entry; only wait (request sent to last
// byte seen) is known to a trace.
type HARTimings struct {
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
}

type harExchange struct {
	start, end time.Time
	req        HARRequest
	resp       HARResponse
	reqBody    []string
	respBody   []string
	sse        bool
}

// ToHAR reads the rest of a trace and builds a HAR of its HTTP exchanges:
// each request with its body (the frame sent), its status and headers, and
// the frames of its answer as the body (an SSE stream as text/event-stream).
// Traces older than exchange numbers have none to join by, and give none.
func ToHAR(r *Reader, creatorVersion string) (*HAR, error) {
	byEx, order, damage := readExchanges(r)
	har := &HAR{Log: HARLog{Version: "1.2", Creator: HARCreator{Name: "mcpi", Version: creatorVersion}, Entries: []HAREntry{}}}
	if damage != nil {
		har.Log.Comment = "the trace is damaged; entries stop before: " + damage.Error()
	}
	sort.SliceStable(order, func(i, j int) bool { return byEx[order[i]].start.Before(byEx[order[j]].start) })
	for _, id := range order {
		har.Log.Entries = append(har.Log.Entries, byEx[id].entry())
	}
	return har, nil
}

// readExchanges gathers the events of the rest of a trace by exchange, in
// the order each exchange first appears. Damage is the error that ended
// the trace early; corrupt lines are skipped.
func readExchanges(r *Reader) (byEx map[uint64]*harExchange, order []uint64, damage error) {
	byEx = map[uint64]*harExchange{}
	damage = r.Each(func(ev Event) {
		h := ev.HTTP
		if h == nil || h.Exchange == 0 {
			return
		}
		x := byEx[h.Exchange]
		if x == nil {
			x = &harExchange{start: ev.Time, req: HARRequest{Method: h.Method, URL: h.URL, HTTPVersion: "HTTP/1.1",
				Headers: nameValues(h.RequestHeader), QueryString: query(h.URL), Cookies: []HARNameValue{}, HeadersSize: -1},
				resp: HARResponse{HTTPVersion: "HTTP/1.1", Headers: []HARNameValue{}, Cookies: []HARNameValue{}, HeadersSize: -1}}
			byEx[h.Exchange] = x
			order = append(order, h.Exchange)
		}
		x.add(ev)
	})
	return byEx, order, damage
}

// add takes one event of the exchange: its status and headers, a frame
// of the request or of the answer, or an answer's body.
func (x *harExchange) add(ev Event) {
	h := ev.HTTP
	x.end = ev.Time
	if h.StatusCode != 0 && x.resp.Status == 0 {
		x.resp.Status = h.StatusCode
		x.resp.StatusText = http.StatusText(h.StatusCode)
		x.resp.Headers = nameValues(h.ResponseHeader)
		ct := http.Header(h.ResponseHeader).Get("Content-Type")
		x.resp.Content.MimeType = ct
		x.sse = strings.HasPrefix(ct, "text/event-stream")
	}
	switch {
	case ev.Type == TypeFrame && ev.Dir == transport.Outgoing:
		x.reqBody = append(x.reqBody, string(ev.Msg))
	case ev.Type == TypeFrame && ev.Dir == transport.Incoming:
		if x.sse {
			line := ""
			if h.SSEEvent != "" {
				line += "event: " + h.SSEEvent + "\n"
			}
			if h.SSEEventID != "" {
				line += "id: " + h.SSEEventID + "\n"
			}
			x.respBody = append(x.respBody, line+"data: "+string(ev.Msg)+"\n\n")
		} else {
			x.respBody = append(x.respBody, string(ev.Msg))
		}
	case ev.Type == TypeHTTP && len(ev.Data) > 0 && ev.Dir != transport.Outgoing:
		x.respBody = append(x.respBody, string(ev.Data))
	}
}

// entry is the exchange as a HAR entry, its bodies joined.
func (x *harExchange) entry() HAREntry {
	if len(x.reqBody) > 0 {
		body := strings.Join(x.reqBody, "\n")
		x.req.PostData = &HARPostData{MimeType: "application/json", Text: body}
		x.req.BodySize = len(body)
	}
	text := strings.Join(x.respBody, "")
	x.resp.Content.Text = text
	x.resp.Content.Size = len(text)
	x.resp.BodySize = len(text)
	ms := float64(x.end.Sub(x.start).Microseconds()) / 1000
	return HAREntry{
		StartedDateTime: x.start.UTC().Format(time.RFC3339Nano), Time: ms,
		Request: x.req, Response: x.resp, Timings: HARTimings{Wait: ms},
	}
}

func nameValues(h map[string][]string) []HARNameValue {
	out := []HARNameValue{}
	names := make([]string, 0, len(h))
	for n := range h {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range h[n] {
			out = append(out, HARNameValue{Name: n, Value: v})
		}
	}
	return out
}

func query(raw string) []HARNameValue {
	out := []HARNameValue{}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	return append(out, nameValues(u.Query())...)
}
