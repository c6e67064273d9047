package check

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/schema"
)

const srcServerValidation = "MCP 2026-07-28 basic/transports/streamable-http § Server Validation"

// poster POSTs a request to the endpoint with extra headers (a nil value
// removes one).
type poster func(extra http.Header, body any) (*http.Response, []byte, error)

// setStandardHeaders sets the headers a modern client mirrors from a
// request's body: Mcp-Method, and Mcp-Name for the requests that name
// something.
func setStandardHeaders(h http.Header, body []byte) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name *string `json:"name"`
			URI  *string `json:"uri"`
		} `json:"params"`
	}
	json.Unmarshal(body, &m)
	h.Set("Mcp-Method", m.Method)
	switch m.Method {
	case "tools/call", "prompts/get":
		if m.Params.Name != nil {
			h.Set("Mcp-Name", headerValue(*m.Params.Name))
		}
	case "resources/read":
		if m.Params.URI != nil {
			h.Set("Mcp-Name", headerValue(*m.Params.URI))
		}
	}
}

// headerValue encodes a value as 2026-07-28 § Value Encoding asks: plain
// when it is visible ASCII without surrounding spaces, else the Base64
// sentinel form.
func headerValue(v string) string {
	safe := v == strings.TrimSpace(v) && !(strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?="))
	for i := 0; safe && i < len(v); i++ {
		safe = v[i] == ' ' || v[i] == '\t' || (v[i] >= 0x21 && v[i] <= 0x7e)
	}
	if safe {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// modernRequest is a modern request whose _meta declares no client
// capability.
func (r *run) modernRequest(id int, method string, params map[string]any) map[string]any {
	p := map[string]any{"_meta": withoutCapabilities(r.rev)}
	for k, v := range params {
		p[k] = v
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p}
}

// refused reports rule when the answer is not 400 with -32020.
func (r *run) refused(rule *Rule, url, what string, resp *http.Response, body []byte) {
	code, _ := errorCode(resp, body)
	if resp.StatusCode != http.StatusBadRequest || code != mcp.CodeHeaderMismatch {
		r.report(rule, "POST "+url, map[string]any{"request": what, "status": resp.StatusCode, "code": code},
			"a request with %s was answered %s; 400 with -32020 (HeaderMismatch) was required", what, answerWords(resp, body))
	}
}

// answerWords says what an HTTP answer to a JSON-RPC request was: its
// status and the JSON-RPC error, or that it was a success.
func answerWords(resp *http.Response, body []byte) string {
	if code, ok := errorCode(resp, body); ok {
		return fmt.Sprintf("%d with JSON-RPC error %d", resp.StatusCode, code)
	}
	if resp.StatusCode/100 == 2 {
		return fmt.Sprintf("%d with a success, not an error", resp.StatusCode)
	}
	return fmt.Sprintf("%d without a JSON-RPC error", resp.StatusCode)
}

// nameHeader sends a request naming something that does not exist (so a
// server that does not look at the header does no harm) with an Mcp-Name
// header that names something else, then with none.
func (r *run) nameHeader(url string, post poster) {
	caps := r.c.ServerCapabilities()
	var req map[string]any
	switch {
	case caps.Tools != nil:
		req = r.modernRequest(4, "tools/call", map[string]any{"name": "mcpi-no-such-tool", "arguments": map[string]any{}})
	case caps.Prompts != nil:
		req = r.modernRequest(4, "prompts/get", map[string]any{"name": "mcpi-no-such-prompt"})
	case caps.Resources != nil:
		req = r.modernRequest(4, "resources/read", map[string]any{"uri": "mcpi-check://no/such/resource"})
	default:
		return
	}
	r.check(ruleHttpNameHeader)
	method := req["method"].(string)
	for _, probe := range []struct {
		what   string
		header http.Header
	}{
		{"Mcp-Name: mcpi-other on a " + method + " of another name", http.Header{"Mcp-Name": {"mcpi-other"}}},
		{"no Mcp-Name header on a " + method, http.Header{"Mcp-Name": nil}},
	} {
		if resp, body, err := post(probe.header, req); err == nil {
			r.refused(ruleHttpNameHeader, url, probe.what, resp, body)
		}
	}
}

// paramHeaders calls a read-only tool that mirrors an argument into an
// Mcp-Param header (only with Call: a server that does not look at the
// header runs the tool), with the header disagreeing with the argument,
// then without it.
func (r *run) paramHeaders(url string, post poster) {
	if !r.opts.Call {
		return
	}
	for _, t := range r.toolList {
		if t.Annotations == nil || t.Annotations.ReadOnlyHint == nil || !*t.Annotations.ReadOnlyHint {
			continue
		}
		path, header, typ := firstHeaderParam(t.InputSchema)
		if header == "" {
			continue
		}
		args, ok := toolArgs(t)
		if !ok {
			continue
		}
		var value, wrong any
		switch typ {
		case "string":
			value, wrong = "mcpi", "mcpi-other"
		case "integer":
			value, wrong = 1, 2
		case "boolean":
			value, wrong = true, false
		}
		setPath(args, path, value)
		req := r.modernRequest(5, "tools/call", map[string]any{"name": t.Name, "arguments": args})
		r.check(ruleHttpParamHeader)
		name := "Mcp-Param-" + header
		for _, probe := range []struct {
			what   string
			header http.Header
		}{
			{fmt.Sprintf("%s: %v while the argument %s is %v", name, wrong, strings.Join(path, "."), value), http.Header{name: {fmt.Sprint(wrong)}}},
			{fmt.Sprintf("no %s header while the argument %s is %v", name, strings.Join(path, "."), value), http.Header{name: nil}},
		} {
			if resp, body, err := post(probe.header, req); err == nil {
				r.refused(ruleHttpParamHeader, url, probe.what, resp, body)
			}
		}
		return // one tool tells
	}
}

// firstHeaderParam finds a property annotated x-mcp-header reached
// through properties alone: its path, header name and type.
func firstHeaderParam(inputSchema json.RawMessage) (path []string, header, typ string) {
	var walk func(node map[string]any, at []string) bool
	walk = func(node map[string]any, at []string) bool {
		props, _ := node["properties"].(map[string]any)
		for name, p := range props {
			sub, ok := p.(map[string]any)
			if !ok {
				continue
			}
			here := append(append([]string(nil), at...), name)
			h, _ := sub["x-mcp-header"].(string)
			t, _ := sub["type"].(string)
			if h != "" && (t == "string" || t == "integer" || t == "boolean") {
				path, header, typ = here, h, t
				return true
			}
			if walk(sub, here) {
				return true
			}
		}
		return false
	}
	var root map[string]any
	if json.Unmarshal(inputSchema, &root) == nil {
		walk(root, nil)
	}
	return
}

func setPath(args map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := args[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			args[k] = next
		}
		args = next
	}
	args[path[len(path)-1]] = v
}

// missingCapabilityStatus sends a request that asked for input again,
// declaring no client capability: a -32021 answer comes with 400.
func (r *run) missingCapabilityStatus(url string, post poster) {
	if len(r.asked) == 0 {
		return
	}
	a := r.asked[0]
	var params map[string]any
	if json.Unmarshal(a.params, &params) != nil {
		return
	}
	delete(params, "_meta")
	resp, body, err := post(nil, r.modernRequest(6, a.method, params))
	if err != nil {
		return
	}
	r.check(ruleErrorsMissingCapability)
	if code, _ := errorCode(resp, body); code == mcp.CodeMissingClientCapability && resp.StatusCode != http.StatusBadRequest {
		r.report(ruleErrorsMissingCapability, "POST "+url, map[string]any{"request": a.method + " " + nameOf(a.params), "status": resp.StatusCode, "code": code},
			"the -32021 answer came with HTTP status %d, not 400", resp.StatusCode)
	}
}

// toolArgs makes arguments for a tool from its input schema (sampleArgs).
func toolArgs(t mcp.Tool) (map[string]any, bool) {
	s, err := schema.Compile(t.InputSchema)
	if err != nil {
		return nil, false
	}
	return sampleArgs(s)
}
