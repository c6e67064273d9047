package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// asked is a request the server answered input_required: it needs
// something of the client, so the client's capabilities matter to it.
type asked struct {
	method string
	params json.RawMessage
	// inputs are the methods of its input requests (elicitation/create...).
	inputs []string
}

// noteAnswer looks at what a modern request got: an input_required result
// is kept for missingCapability; a -32021 error must say what it lacks.
func (r *run) noteAnswer(method string, params, res json.RawMessage, err error) {
	if !mcp.IsModern(r.rev) {
		return
	}
	if err != nil {
		var re *session.RPCError
		if errorsAs(err, &re) && re.RPCError != nil && re.Code == mcp.CodeMissingClientCapability {
			r.check(ruleErrorsMissingCapability)
			if !hasRequiredCapabilities(re.Data) {
				r.report(ruleErrorsMissingCapability, method, re.RPCError, "the -32021 error does not list the capabilities it needs in data.requiredCapabilities")
			}
		}
		return
	}
	if rt, _ := mcp.MemberString(res, "resultType"); rt != mcp.ResultInputRequired || len(r.asked) >= 5 {
		return
	}
	r.asked = append(r.asked, asked{method: method, params: params, inputs: inputMethods(res)})
}

func hasRequiredCapabilities(data json.RawMessage) bool {
	var d struct {
		Required map[string]json.RawMessage `json:"requiredCapabilities"`
	}
	return json.Unmarshal(data, &d) == nil && d.Required != nil
}

// inputMethods lists the methods an input_required result asks for.
func inputMethods(res json.RawMessage) []string {
	var ir struct {
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
	}
	json.Unmarshal(res, &ir)
	var ms []string
	for _, q := range ir.InputRequests {
		ms = append(ms, q.Method)
	}
	sort.Strings(ms)
	return ms
}

// missingCapability sends again, on a connection of its own that declares
// no client capability, each request the server answered with input
// requests: the server must now refuse it with -32021 and the capabilities
// it needs, never ask for what the client did not declare.
func (r *run) missingCapability() {
	if !mcp.IsModern(r.rev) || len(r.asked) == 0 || r.opts.Dial == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, 3*r.opts.Timeout)
	defer cancel()
	conn, release, err := r.dial(ctx)
	if err != nil {
		return
	}
	defer release()
	c, err := session.Connect(ctx, conn, session.Options{Era: session.EraModern, ProtocolVersion: r.rev, Capabilities: &mcp.ClientCapabilities{},
		Timeout: r.opts.Timeout, ProbeTimeout: r.opts.Timeout, ClientInfo: mcp.Implementation{Name: "mcpi-check", Version: "1"}})
	if err != nil {
		return
	}
	defer c.Close()
	for _, a := range r.asked {
		subject := a.method + " " + nameOf(a.params)
		rctx, rcancel := context.WithTimeout(ctx, r.opts.Timeout)
		res, err := c.Send(rctx, a.method, a.params, nil)
		rcancel()
		if err != nil && ctx.Err() == nil && (errors.Is(err, session.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)) {
			r.noAnswer(&noAnswerError{method: a.method, after: r.opts.Timeout, err: err}, subject, ruleErrorsMissingCapability)
			continue
		}
		var re *session.RPCError
		if err == nil || (errorsAs(err, &re) && re.RPCError != nil) {
			r.check(ruleErrorsMissingCapability) // an answer: something learnt
		}
		switch {
		case err == nil:
			if rt, _ := mcp.MemberString(res, "resultType"); rt == mcp.ResultInputRequired {
				r.report(ruleErrorsMissingCapability, subject, clipRaw(res), "with no client capability declared, the server still asked for %s instead of refusing with -32021 (MissingRequiredClientCapability)",
					strings.Join(inputMethods(res), ", "))
			}
		case !errorsAs(err, &re) || re.RPCError == nil:
			// The connection failed: nothing learnt.
		case re.Code == mcp.CodeMissingClientCapability:
			if !hasRequiredCapabilities(re.Data) {
				r.report(ruleErrorsMissingCapability, subject, re.RPCError, "the -32021 error does not list the capabilities it needs in data.requiredCapabilities")
			}
		default:
			r.report(ruleErrorsMissingCapability, subject, re.RPCError, "with no client capability declared, the request (which asked for %s when they were) was refused with %d, not -32021 (MissingRequiredClientCapability)",
				strings.Join(a.inputs, ", "), re.Code)
		}
	}
}

// nameOf returns what a request's params name: a tool or prompt, or a URI.
func nameOf(params json.RawMessage) string {
	if n, ok := mcp.MemberString(params, "name"); ok {
		return fmt.Sprintf("%q", n)
	}
	if u, ok := mcp.MemberString(params, "uri"); ok {
		return u
	}
	return ""
}

// withoutCapabilities is the _meta of a modern request that declares no
// client capability.
func withoutCapabilities(rev string) map[string]any {
	return map[string]any{mcp.MetaProtocolVersion: rev, mcp.MetaClientCapabilities: map[string]any{}, mcp.MetaClientInfo: map[string]any{"name": "mcpi-check", "version": "1"}}
}
