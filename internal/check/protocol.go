package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/specschema"
)

const maxInstructions = 8 << 10

func (r *run) handshake() {
	init := r.c.InitializeResult()
	raw := r.c.InitializeResultRaw()
	// The session is connected: its handshake completed.
	r.check(ruleHandshakeCompletes, ruleHandshakeServerInfo, ruleHandshakeInstructionsSize, ruleSecurityHiddenText)
	if init == nil {
		return
	}
	si := init.ServerInfo
	if mcp.IsModern(r.rev) {
		var meta map[string]json.RawMessage
		json.Unmarshal(init.Meta, &meta)
		if _, ok := meta[mcp.MetaServerInfo]; !ok && session.TopLevelServerInfo(raw) != nil {
			r.report(ruleHandshakeServerInfo, "serverInfo", raw, `serverInfo is at the top level of the server/discover result, not in _meta["%s"] where 2026-07-28 puts it`, mcp.MetaServerInfo)
		}
	}
	if si.Name == "" {
		r.report(ruleHandshakeServerInfo, "serverInfo", raw, "serverInfo has no name")
	}
	if si.Version == "" {
		r.report(ruleHandshakeServerInfo, "serverInfo", raw, "serverInfo has no version")
	}
	r.hiddenText("serverInfo", raw, map[string]string{"name": si.Name, "title": si.Title, "version": si.Version, "instructions": init.Instructions})
	r.icons("serverInfo", si.Icons)
	if n := len(init.Instructions); n > maxInstructions {
		r.report(ruleHandshakeInstructionsSize, "instructions", nil, "instructions are %d bytes (at most %d advised)", n, maxInstructions)
	}
}

// utilities checks ping, logging/setLevel and what the capabilities say.
func (r *run) utilities() {
	if mcp.IsModern(r.rev) {
		return // 2026-07-28 removed ping and logging/setLevel
	}
	r.check(rulePingAnswers)
	if res, err := r.probe("ping", nil); err != nil {
		r.report(rulePingAnswers, "ping", nil, "ping failed: %v", err)
	} else if s := strings.TrimSpace(string(res)); s != "{}" && !strings.HasPrefix(s, "{") {
		r.report(rulePingAnswers, "ping", res, "ping's result is not an object")
	}
	caps := r.c.ServerCapabilities()
	switch {
	case caps.Logging != nil && r.opts.Borrowed:
		r.skipped = append(r.skipped, SkippedSetLevel)
	case caps.Logging != nil:
		r.check(ruleLoggingSetLevel)
		if _, err := r.probe("logging/setLevel", mcp.SetLevelParams{Level: "warning"}); err != nil {
			r.report(ruleLoggingSetLevel, "logging/setLevel", nil, "the server declares logging but refused logging/setLevel: %v", err)
		}
	}
}

// unknowns checks the errors for what does not exist. A probe the server
// does not answer at all, or answers with no JSON-RPC message (the
// connection ended, the answer was malformed), is an errors/no-answer
// finding, and leaves its rule unchecked: it learnt nothing.
func (r *run) unknowns() {
	r.check(ruleErrorsNoAnswer)
	_, err := r.probe("mcpi/no-such-method", map[string]any{})
	if !r.learntNothing(err, "mcpi/no-such-method", ruleErrorsUnknownMethod) {
		r.check(ruleErrorsUnknownMethod)
		switch code, ok := rpcCode(err); {
		case err == nil:
			r.report(ruleErrorsUnknownMethod, "mcpi/no-such-method", nil, "an unknown method was answered with a result")
		case ok && code != mcp.CodeMethodNotFound:
			r.report(ruleErrorsUnknownMethod, "mcpi/no-such-method", nil, "an unknown method got error %d, not -32601", code)
		}
	}
	caps := r.c.ServerCapabilities()
	if caps.Tools != nil {
		res, err := r.probe("tools/call", mcp.CallToolParams{Name: "mcpi-no-such-tool", Arguments: json.RawMessage(`{}`)})
		if !r.learntNothing(err, "tools/call mcpi-no-such-tool", ruleErrorsUnknownTool) {
			r.check(ruleErrorsUnknownTool)
			switch code, ok := rpcCode(err); {
			case err == nil:
				var ctr mcp.CallToolResult
				if json.Unmarshal(res, &ctr) == nil && ctr.IsError {
					msg := "an unknown tool was answered with isError, not a JSON-RPC error (-32602)"
					if len(ctr.Content) == 1 && tsSDKUnknownTool().MatchString(ctr.Content[0].Text) {
						msg += "; this is the TypeScript SDK's McpServer default (@modelcontextprotocol/sdk through 1.32.2, typescript-sdk #1510): its servers answer so unless they handle tools/call themselves"
					}
					r.report(ruleErrorsUnknownTool, "tools/call mcpi-no-such-tool", res, "%s", msg)
				} else {
					r.report(ruleErrorsUnknownTool, "tools/call mcpi-no-such-tool", res, "an unknown tool was answered with a result")
				}
			case ok && code != mcp.CodeInvalidParams:
				r.report(ruleErrorsUnknownTool, "tools/call mcpi-no-such-tool", nil, "an unknown tool got error %d, not -32602", code)
			}
		}
	}
	if caps.Resources != nil {
		_, err := r.probe("resources/read", mcp.ReadResourceParams{URI: "mcpi-check://no/such/resource"})
		want, src := -32002, ""
		if mcp.IsModern(r.rev) {
			want, src = mcp.CodeInvalidParams, " (MCP 2026-07-28 server/resources § Error Handling)"
		}
		if !r.learntNothing(err, "resources/read mcpi-check://no/such/resource", ruleErrorsUnknownResource) {
			r.check(ruleErrorsUnknownResource)
			switch code, ok := rpcCode(err); {
			case err == nil:
				r.report(ruleErrorsUnknownResource, "resources/read mcpi-check://no/such/resource", nil, "an unknown resource was read successfully")
			case ok && code != want && mcp.RevisionAtLeast(r.rev, mcp.Rev20250618):
				r.report(ruleErrorsUnknownResource, "resources/read mcpi-check://no/such/resource", nil, "an unknown resource got error %d, not %d%s", code, want, src)
			}
		}
	}
	if caps.Prompts != nil {
		_, err := r.probe("prompts/get", mcp.GetPromptParams{Name: "mcpi-no-such-prompt"})
		if !r.learntNothing(err, "prompts/get mcpi-no-such-prompt", ruleErrorsUnknownPrompt) {
			r.check(ruleErrorsUnknownPrompt)
			switch code, ok := rpcCode(err); {
			case err == nil:
				r.report(ruleErrorsUnknownPrompt, "prompts/get mcpi-no-such-prompt", nil, "an unknown prompt was answered with a result")
			case ok && code != mcp.CodeInvalidParams:
				r.report(ruleErrorsUnknownPrompt, "prompts/get mcpi-no-such-prompt", nil, "an unknown prompt got error %d, not -32602", code)
			}
		}
	}
}

// wire reports what the session saw go wrong on the wire during the run.
func (r *run) wire() {
	r.check(ruleWireFrames, ruleWireJsonrpc, ruleWireStderr)
	r.obs.mu.Lock()
	warnings, stderr := r.obs.warnings, r.obs.stderr
	r.obs.mu.Unlock()
	seen := map[string]int{}
	for _, w := range warnings {
		id := ruleWireJsonrpc
		if w.Kind == "bad-frame" {
			id = ruleWireFrames
		}
		if seen[w.Kind+w.Message]++; seen[w.Kind+w.Message] > 3 {
			continue
		}
		r.report(id, w.Kind, w.Data, "%s", w.Message)
	}
	if stderr > 0 {
		r.report(ruleWireStderr, "stderr", nil, "the server wrote %d line(s) to stderr (fine for logs: clients show them, and do not read them as protocol)", stderr)
	}
}

// list fetches every page of method's list (member is the array's name)
// under the session's pagination rule (session.Paginate: its page cap, no
// cursor followed twice), checking its cursors, and returns the items. err
// is the first page's failure; a later page's is a finding.
func (r *run) list(method, member string) (items []json.RawMessage, err error) {
	r.check(rulePaginationCursor)
	pages := 0
	var last json.RawMessage
	items, err = session.Paginate(r.ctx, method, r.c.MaxPages(), func(_ context.Context, cursor string) ([]json.RawMessage, string, error) {
		var params any = map[string]any{}
		if cursor != "" {
			params = mcp.PaginatedParams{Cursor: cursor}
		}
		res, err := r.probe(method, params)
		if err != nil {
			if pages > 0 {
				r.report(rulePaginationCursor, method, nil, "page %d (cursor %q) failed: %v", pages+1, bounds.Clip(cursor), err)
				return nil, "", nil
			}
			return nil, "", err
		}
		pages++
		last = res
		var p map[string]json.RawMessage
		if err := json.Unmarshal(res, &p); err != nil {
			return nil, "", fmt.Errorf("the result is not an object: %v", err)
		}
		var got []json.RawMessage
		if err := json.Unmarshal(p[member], &got); err != nil && len(p[member]) > 0 {
			return nil, "", fmt.Errorf("%s is not an array: %v", member, err)
		}
		var next string
		json.Unmarshal(p["nextCursor"], &next)
		return got, next, nil
	})
	var te *session.TruncatedError
	switch {
	case errors.As(err, &te) && te.Repeated != "":
		r.report(rulePaginationCursor, method, clipRaw(last), "nextCursor %q was given before, after %d page(s): the list never ends", bounds.Clip(te.Repeated), te.Pages)
		return items, nil
	case errors.As(err, &te):
		r.report(rulePaginationCursor, method, nil, "the list still had a nextCursor after %d pages, the most a listing reads; stopped there", te.Pages)
		return items, nil
	}
	return items, err
}

// duplicates reports items of a list that share a key.
func (r *run) duplicates(method, what string, keys []string) {
	r.check(rulePaginationDuplicates)
	count := map[string]int{}
	for _, k := range keys {
		count[k]++
	}
	for _, k := range keys {
		if count[k] > 1 {
			r.report(rulePaginationDuplicates, fmt.Sprintf("%s %q", what, k), nil, "%s lists %s %q %d times", method, what, k, count[k])
			count[k] = 0
		}
	}
}

// hiddenText reports fields of subject that hold what a terminal or a
// person would not see (safetext.Unsafe: escapes, bidi, zero-width, tags).
func (r *run) hiddenText(subject string, evidence any, fields map[string]string) {
	r.check(ruleSecurityHiddenText)
	for name, v := range fields {
		if i := firstUnsafe(v); i >= 0 {
			r.report(ruleSecurityHiddenText, subject, evidence, "%s holds %s at byte %d: %s", name, describeUnsafe(v[i:]), i, safetext.OneLine(clip(v, 120)))
		}
	}
}

// firstUnsafe is the byte index of the first rune in s that a terminal
// would act on or not show, or -1.
func firstUnsafe(s string) int {
	for i, c := range s {
		if c == '\n' || c == '\t' {
			continue
		}
		if safetext.Unsafe(c) {
			return i
		}
	}
	return -1
}

// describeUnsafe names the kind of the unsafe rune s starts with.
func describeUnsafe(s string) string {
	r := []rune(s)[0]
	switch {
	case r == 0x1b:
		return "an escape sequence"
	case r >= 0xe0000 && r <= 0xe007f:
		return "Unicode tag characters (invisible text)"
	case safetext.IsBidiControl(r):
		return fmt.Sprintf("a bidirectional control (U+%04X)", r)
	case r == 0x200b || r == 0x200c || r == 0x200d || r == 0x2060 || r == 0xfeff:
		return fmt.Sprintf("a zero-width character (U+%04X)", r)
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return fmt.Sprintf("a control character (U+%04X)", r)
	}
	return fmt.Sprintf("an invisible character (U+%04X)", r)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// conformance checks every result the run got (and the handshake's)
// against the schema of the negotiated revision.
func (r *run) conformance() {
	if !mcp.IsKnownRevision(r.rev) {
		return
	}
	r.check(ruleResultsSchema)
	if mcp.IsModern(r.rev) {
		_, err := r.probe("server/discover", map[string]any{})
		r.noAnswer(err, "server/discover", ruleResultsSchema)
	} else if raw := r.c.InitializeResultRaw(); len(raw) > 0 {
		r.results["initialize"] = append(r.results["initialize"], raw)
	}
	methods := make([]string, 0, len(r.results))
	for m := range r.results {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	for _, method := range methods {
		def := specschema.ResultOf[method]
		if def == "" || !specschema.Has(r.rev, def) {
			continue
		}
		reported := 0
		for _, raw := range r.results[method] {
			ps, err := specschema.Validate(r.rev, def, raw)
			if err != nil || ps == nil {
				continue
			}
			if reported++; reported > 3 {
				break
			}
			r.report(ruleResultsSchema, method, clipRaw(raw), "the result is not a valid %s of %s: %v", def, r.rev, ps)
		}
	}
}

// feature lists a feature's items (method, the array member) and checks
// that the capability the server declared, or did not, tells the truth. ok
// is false when there is nothing more to check.
func (r *run) feature(name, method, member string, declared bool) (items []json.RawMessage, ok bool) {
	items, err := r.list(method, member)
	r.check(ruleCapabilitiesDeclaredWorks, ruleCapabilitiesUndeclaredWorks)
	switch {
	case declared && err != nil:
		r.report(ruleCapabilitiesDeclaredWorks, name, nil, "the server declares %s but %s failed: %v", name, method, err)
		return nil, false
	case !declared && err == nil && len(items) > 0:
		r.report(ruleCapabilitiesUndeclaredWorks, name, nil, "%s lists %d item(s) but the server does not declare the %s capability: clients will not ask", method, len(items), name)
	case err != nil:
		r.noAnswer(err, method, ruleCapabilitiesUndeclaredWorks)
		return nil, false
	}
	return items, true
}

// learntNothing reports, as noAnswer does, a probe that got no answer, and
// also one whose answer was no JSON-RPC message at all (the connection
// ended, the answer was malformed): the rule it was for stays unchecked.
func (r *run) learntNothing(err error, subject string, rule *Rule) bool {
	if r.noAnswer(err, subject, rule) {
		return true
	}
	if _, ok := rpcCode(err); err == nil || ok || r.ctx.Err() != nil {
		return false
	}
	r.report(ruleErrorsNoAnswer, subject, nil, "no usable answer: %s; %s could not be checked", bounds.Clip(err.Error()), rule.ID)
	return true
}

// tsSDKUnknownTool is the text the TypeScript SDK's McpServer puts in the
// isError result it gives an unknown tool.
var tsSDKUnknownTool = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^MCP error -32602: Tool .* not found$`) })
