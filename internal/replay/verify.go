package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// skipVerify are requests the session itself performs, or that only make
// sense inside the recorded session.
var skipVerify = map[string]bool{"initialize": true, "server/discover": true, "subscriptions/listen": true}

// VerifyOptions tune Verify.
type VerifyOptions struct {
	Ignore Ignore
	// Out receives the readable report.
	Out io.Writer
}

// Result is what Verify found for one exchange.
type Result struct {
	Exchange *Exchange
	Changes  []Change
	Err      error // the request could not be compared (no recorded answer, transport failure)
}

// Verify sends the recorded requests to a live server, in order, and
// compares each answer with the recorded one. It reports whether every
// answer was equal.
func Verify(ctx context.Context, c *session.Client, t *Trace, opts VerifyOptions) (bool, []Result) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	equal := true
	var results []Result
	report := func(r Result) {
		results = append(results, r)
		name := fmt.Sprintf("#%d %s", r.Exchange.N, r.Exchange.Describe())
		switch {
		case r.Err != nil:
			equal = false
			fmt.Fprintf(out, "✗ %s: %v\n", name, r.Err)
		case len(r.Changes) > 0:
			equal = false
			fmt.Fprintf(out, "✗ %s: %d difference(s)\n", name, len(r.Changes))
			for _, ch := range r.Changes {
				fmt.Fprintf(out, "    %s\n", ch)
			}
		default:
			fmt.Fprintf(out, "✓ %s\n", name)
		}
	}
	// The handshake first: the live server's answer to initialize (or
	// server/discover) against the recorded one.
	for _, ex := range t.Exchanges {
		if (ex.Method == "initialize" || ex.Method == "server/discover") && ex.Response != nil {
			if (ex.Method == "initialize") == (c.Era() == session.EraLegacy) {
				live, _ := json.Marshal(map[string]json.RawMessage{"result": c.InitializeResultRaw()})
				report(compare(ex, live, opts.Ignore))
				break
			}
		}
	}
	for _, ex := range t.Exchanges {
		if skipVerify[ex.Method] {
			continue
		}
		if ex.Response == nil {
			report(Result{Exchange: ex, Err: fmt.Errorf("the trace has no recorded answer to compare with")})
			continue
		}
		live, err := send(ctx, c, ex)
		if err != nil {
			report(Result{Exchange: ex, Err: err})
			if ctx.Err() != nil {
				break
			}
			continue
		}
		report(compare(ex, live, opts.Ignore))
	}
	return equal, results
}

// send re-sends a recorded request and returns the live answer as
// {"result": ...} or {"error": ...}.
func send(ctx context.Context, c *session.Client, ex *Exchange) ([]byte, error) {
	params := stripMeta(ex.Params)
	raw, err := c.Send(ctx, ex.Method, params, nil)
	if err == nil {
		return json.Marshal(map[string]json.RawMessage{"result": raw})
	}
	var re *session.RPCError
	if ok := asRPC(err, &re); ok {
		return json.Marshal(map[string]any{"error": map[string]any{"code": re.Code, "message": re.Message}})
	}
	return nil, err
}

func asRPC(err error, target **session.RPCError) bool {
	for e := err; e != nil; {
		if re, ok := e.(*session.RPCError); ok {
			*target = re
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

func stripMeta(params json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil || m == nil {
		return params
	}
	delete(m, "_meta")
	b, _ := json.Marshal(m)
	return b
}

// compare diffs the recorded answer with the live one, ignoring the
// envelope (jsonrpc, id) and, for errors, the data.
func compare(ex *Exchange, live []byte, ig Ignore) Result {
	var rec map[string]json.RawMessage
	json.Unmarshal(ex.Response, &rec)
	recorded := map[string]json.RawMessage{}
	if r, ok := rec["result"]; ok {
		recorded["result"] = r
	}
	if e, ok := rec["error"]; ok {
		var eo struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		json.Unmarshal(e, &eo)
		recorded["error"], _ = json.Marshal(map[string]any{"code": eo.Code, "message": eo.Message})
	}
	recBytes, _ := json.Marshal(recorded)
	changes, err := Diff(recBytes, live, ig)
	return Result{Exchange: ex, Changes: changes, Err: err}
}

// Handler answers the live server's requests (sampling, elicitation,
// roots) with the answers recorded for the same requests, matched like the
// mock server matches: method and params, in recorded order.
type Handler struct {
	t    *Trace
	mu   sync.Mutex
	used map[string]int
}

// NewHandler returns a handler answering from t.
func NewHandler(t *Trace) *Handler { return &Handler{t: t, used: map[string]int{}} }

func (h *Handler) answer(method string, params any, result any) error {
	b, _ := json.Marshal(params)
	key := requestKey(method, b)
	var cands []*ServerRequest
	for _, sr := range h.t.ServerRequests {
		if sr.Key == key && sr.Answer != nil {
			cands = append(cands, sr)
		}
	}
	if len(cands) == 0 {
		for _, sr := range h.t.ServerRequests {
			if sr.Method == method && sr.Answer != nil {
				cands = append(cands, sr)
			}
		}
	}
	if len(cands) == 0 {
		return &mcp.RPCError{Code: -1, Message: "the trace has no recorded answer to " + method}
	}
	h.mu.Lock()
	i := min(h.used[key], len(cands)-1)
	h.used[key]++
	h.mu.Unlock()
	var m mcp.Message
	if err := json.Unmarshal(cands[i].Answer, &m); err != nil {
		return err
	}
	if m.Error != nil {
		return m.Error
	}
	return json.Unmarshal(m.Result, result)
}

// CreateMessage answers from the trace.
func (h *Handler) CreateMessage(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	var r mcp.CreateMessageResult
	return &r, h.answer("sampling/createMessage", p, &r)
}

// Elicit answers from the trace.
func (h *Handler) Elicit(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	var r mcp.ElicitResult
	return &r, h.answer("elicitation/create", p, &r)
}

// ListRoots answers from the trace.
func (h *Handler) ListRoots(context.Context) (*mcp.ListRootsResult, error) {
	var r mcp.ListRootsResult
	return &r, h.answer("roots/list", struct{}{}, &r)
}

// Summary counts the results.
func Summary(results []Result) string {
	var ok, bad int
	for _, r := range results {
		if r.Err == nil && len(r.Changes) == 0 {
			ok++
		} else {
			bad++
		}
	}
	if bad == 0 {
		return fmt.Sprintf("%d exchange(s) verified, all equal", ok)
	}
	return fmt.Sprintf("%d of %d exchange(s) differ", bad, ok+bad)
}

// Report is a verification as `replay --verify --json` prints it.
type Report struct {
	Equal     bool             `json:"equal"`
	Summary   string           `json:"summary"`
	Exchanges []ReportExchange `json:"exchanges"`
}

// ReportExchange is one exchange of a Report: equal, or its error, or
// its changes (each value as compact JSON, absent where it is).
type ReportExchange struct {
	N       int            `json:"n"`
	Method  string         `json:"method"`
	What    string         `json:"what"`
	Equal   bool           `json:"equal"`
	Error   string         `json:"error,omitempty"`
	Changes []ReportChange `json:"changes,omitempty"`
}

// ReportChange is a Change in a Report.
type ReportChange struct {
	Path string `json:"path"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// NewReport is the report of a verification's results.
func NewReport(results []Result) Report {
	r := Report{Equal: true, Summary: Summary(results), Exchanges: []ReportExchange{}}
	for _, res := range results {
		e := ReportExchange{N: res.Exchange.N, Method: res.Exchange.Method, What: res.Exchange.Describe(), Equal: res.Err == nil && len(res.Changes) == 0}
		if res.Err != nil {
			e.Error = res.Err.Error()
		}
		for _, ch := range res.Changes {
			e.Changes = append(e.Changes, ReportChange(ch))
		}
		r.Equal = r.Equal && e.Equal
		r.Exchanges = append(r.Exchanges, e)
	}
	return r
}

// RecordedClient returns the client info and capabilities the recorded
// client declared (in initialize, or in the _meta of server/discover), so
// that a verify speaks to the server as the recorded host did. ok is false
// when the trace has neither.
func RecordedClient(t *Trace) (info *mcp.Implementation, caps *mcp.ClientCapabilities, ok bool) {
	for _, ex := range t.Exchanges {
		var p struct {
			Capabilities *mcp.ClientCapabilities    `json:"capabilities"`
			ClientInfo   *mcp.Implementation        `json:"clientInfo"`
			Meta         map[string]json.RawMessage `json:"_meta"`
		}
		if json.Unmarshal(ex.Params, &p) != nil {
			continue
		}
		switch ex.Method {
		case "initialize":
			if p.ClientInfo != nil || p.Capabilities != nil {
				return p.ClientInfo, p.Capabilities, true
			}
		case "server/discover":
			var i mcp.Implementation
			var c mcp.ClientCapabilities
			gotInfo := json.Unmarshal(p.Meta[mcp.MetaClientInfo], &i) == nil
			gotCaps := json.Unmarshal(p.Meta[mcp.MetaClientCapabilities], &c) == nil
			if gotInfo || gotCaps {
				if !gotInfo {
					return nil, &c, true
				}
				if !gotCaps {
					return &i, nil, true
				}
				return &i, &c, true
			}
		}
	}
	return nil, nil, false
}

// Comparable counts the exchanges Verify can compare: those with a
// recorded answer, the handshake included.
func Comparable(t *Trace) int {
	n := 0
	for _, ex := range t.Exchanges {
		if ex.Response != nil {
			n++
		}
	}
	return n
}
