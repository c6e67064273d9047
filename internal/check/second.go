package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Dialer opens another connection to the server under check.
type Dialer func(ctx context.Context) (transport.Conn, error)

// secondConnection runs the checks that need a connection of their own:
// an unknown protocol version offered, and the other era of a server that
// speaks both.
func (r *run) secondConnection() {
	if r.opts.Dial == nil {
		return
	}
	r.onSecond("a second connection, which offered the revision "+unknownRevision, r.unknownVersion)
	r.otherEra()
	r.onSecond("a second connection, which declared no client capability", r.missingCapability)
}

// roundTrip sends frame on a new connection, with header on HTTP, and
// returns the answer to its id 1 (other frames are skipped). Over HTTP an
// error status whose body is that answer (a modern server's 400) is one.
func (r *run) roundTrip(frame any, header http.Header) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.Timeout)
	defer cancel()
	conn, release, err := r.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	b, _ := json.Marshal(frame)
	if err := conn.Send(transport.WithHeader(ctx, header), b); err != nil {
		if body, ok := answerIn(err); ok {
			return body, nil
		}
		return nil, err
	}
	type result struct {
		data json.RawMessage
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		for {
			f, err := conn.Recv()
			if err != nil {
				ch <- result{err: err}
				return
			}
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if f.LostID == "1" {
				if body, ok := answerIn(f.Err); ok {
					ch <- result{data: body}
				} else {
					ch <- result{err: f.Err}
				}
				return
			}
			if f.Err == nil && json.Unmarshal(f.Data, &m) == nil && string(m.ID) == "1" {
				ch <- result{data: f.Data}
				return
			}
		}
	}()
	select {
	case res := <-ch:
		return res.data, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer within %v", r.opts.Timeout)
	}
}

const unknownRevision = "2099-01-01"

// unknownVersion offers a revision that does not exist: a legacy server
// answers initialize with one it supports; a modern one refuses with
// -32022 and lists what it supports.
func (r *run) unknownVersion() {
	r.check(ruleHandshakeUnknownVersion)
	subject := "initialize with protocolVersion " + unknownRevision
	frame := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": unknownRevision, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "mcpi-check", "version": "1"}}}
	if mcp.IsModern(r.rev) {
		subject = "server/discover with protocolVersion " + unknownRevision
		frame = map[string]any{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": map[string]any{"_meta": map[string]any{
			mcp.MetaProtocolVersion: unknownRevision, mcp.MetaClientCapabilities: map[string]any{}, mcp.MetaClientInfo: map[string]any{"name": "mcpi-check", "version": "1"}}}}
	}
	var header http.Header
	if mcp.IsModern(r.rev) {
		header = http.Header{"Mcp-Protocol-Version": {unknownRevision}, "Mcp-Method": {"server/discover"}}
	}
	raw, err := r.roundTrip(frame, header)
	if err != nil {
		r.report(ruleHandshakeUnknownVersion, subject, nil, "the server gave no answer: %v", err)
		return
	}
	var m struct {
		Result *struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
		Error *struct {
			Code int             `json:"code"`
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	json.Unmarshal(raw, &m)
	if mcp.IsModern(r.rev) {
		var data struct {
			Supported []string `json:"supported"`
		}
		switch {
		case m.Error == nil:
			r.report(ruleHandshakeUnknownVersion, subject, raw, "the server answered a request of an unknown revision instead of refusing it with -32022")
		case m.Error.Code == -32020:
			// The transport's header says another revision: inconclusive.
		case m.Error.Code != -32022:
			r.report(ruleHandshakeUnknownVersion, subject, raw, "refused with %d, not -32022 (UnsupportedProtocolVersion)", m.Error.Code)
		case json.Unmarshal(m.Error.Data, &data) != nil || len(data.Supported) == 0:
			r.report(ruleHandshakeUnknownVersion, subject, raw, "the -32022 error does not list the supported versions in data.supported")
		}
		return
	}
	switch {
	case m.Error != nil:
		r.report(ruleHandshakeUnknownVersion, subject, raw, "the server refused the handshake (%d) instead of answering with a revision it supports", m.Error.Code)
	case m.Result == nil:
		r.report(ruleHandshakeUnknownVersion, subject, raw, "the answer has neither result nor error")
	case m.Result.ProtocolVersion == unknownRevision:
		r.report(ruleHandshakeUnknownVersion, subject, raw, "the server echoed the unknown revision instead of answering with one it supports")
	case !mcp.IsKnownRevision(m.Result.ProtocolVersion):
		r.report(ruleHandshakeUnknownVersion, subject, raw, "the server answered with %q, which no MCP specification defines", m.Result.ProtocolVersion)
	}
}

// otherEra connects in the era the session did not use; when the server
// speaks it too, its tools must be the same.
func (r *run) otherEra() {
	other := session.EraLegacy
	if !mcp.IsModern(r.rev) {
		other = session.EraModern
	}
	ctx, cancel := context.WithTimeout(r.ctx, 3*r.opts.Timeout)
	defer cancel()
	conn, release, err := r.dial(ctx)
	if err != nil {
		return
	}
	defer release()
	c, err := session.Connect(ctx, conn, session.Options{Era: other, Timeout: r.opts.Timeout, ProbeTimeout: r.opts.Timeout,
		ClientInfo: mcp.Implementation{Name: "mcpi-check", Version: "1"}})
	if err != nil {
		return // the server speaks one era
	}
	defer c.Close()
	if c.Era() != other {
		return
	}
	defer func(prev string) { r.via = prev }(r.via)
	r.via = "a second connection, in the " + other + " era"
	r.check(ruleDualEraSameTools)
	if r.c.ServerCapabilities().Tools == nil && c.ServerCapabilities().Tools == nil {
		return
	}
	// The session's tools are those its tools step listed: over stdio it
	// is closed by now.
	mine, err1 := r.toolList, error(nil)
	if !r.toolsListed {
		err1 = errors.New("the tools step could not list them")
	}
	theirs, err2 := c.AllTools(ctx)
	if err1 != nil && err2 != nil {
		return // failing in both eras is no difference between them: the tools step says why
	}
	if err1 != nil || err2 != nil {
		r.report(ruleDualEraSameTools, "tools/list", nil, "the tools of one era could not be listed (%s era: %v; %s era: %v)", r.c.Era(), err1, other, err2)
		return
	}
	a, b := toolNames(mine), toolNames(theirs)
	if !slices.Equal(a, b) {
		r.report(ruleDualEraSameTools, "tools/list", map[string][]string{r.c.Era(): a, other: b},
			"the %s era lists %d tool(s), the %s era %d: %s", r.c.Era(), len(a), other, len(b), diffNames(a, b))
	}
}

func toolNames(ts []mcp.Tool) []string {
	var n []string
	for _, t := range ts {
		n = append(n, t.Name)
	}
	sort.Strings(n)
	return n
}

func diffNames(a, b []string) string {
	var only []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			only = append(only, "-"+x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			only = append(only, "+"+x)
		}
	}
	if len(only) == 0 {
		return "the same names, listed differently"
	}
	return strings.Join(only, " ")
}

// answerIn returns the JSON-RPC answer to id 1 an HTTP error status
// carried in its body.
func answerIn(err error) (json.RawMessage, bool) {
	var he *transport.HTTPError
	if !errors.As(err, &he) {
		return nil, false
	}
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(he.Body, &m) != nil || string(m.ID) != "1" {
		return nil, false
	}
	return he.Body, true
}
