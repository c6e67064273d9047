// Package check is mcpi's protocol linter: rules, each with the spec
// revision and section (or the host's documentation) it comes from, run
// against a connected session, and the findings they produce, each with
// the frame that shows it.
//
// It imports session, mcp, schema and safetext, never a front end: the
// CLI prints a Report, and so can the TUI.
package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/check/hosts"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Severity orders findings: an Error is what a client will reject or a
// MUST broken; a Warning a SHOULD broken or what a major host rejects; an
// Info what is worth knowing.
type Severity int

const (
	Info Severity = iota
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "info"
}

// MarshalText makes a Severity its name in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// A Rule is one thing check looks at.
type Rule struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
	// Summary says what the rule asks, in one sentence.
	Summary string `json:"summary"`
	// Source is where the rule comes from: a spec revision and section,
	// or a host's documentation with the date its limits were checked.
	Source string `json:"source"`
}

// A Finding is a rule broken by one subject.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Subject names what broke the rule: `tool "add"`, `resource demo://x`,
	// `initialize`.
	Subject string `json:"subject"`
	Message string `json:"message"`
	Source  string `json:"source"`
	// Evidence is the part of a frame that shows it (JSON when it was JSON).
	Evidence json.RawMessage `json:"evidence,omitempty"`
	// Connection, when set, says the finding was made on a connection of
	// the check's own, not the session's, and what that one declared.
	Connection string `json:"connection,omitempty"`
}

// Report is what a run found.
type Report struct {
	Server          mcp.Implementation `json:"server"`
	ProtocolVersion string             `json:"protocolVersion"`
	Era             string             `json:"era"`
	Transport       string             `json:"transport,omitempty"`
	// Rules are the rules that were checked (a rule whose subject the
	// server does not have, such as prompts on a server without them, is
	// not listed).
	Rules    []Rule    `json:"rules"`
	Findings []Finding `json:"findings"`
	// Hosts is the host matrix: one row per host profile.
	Hosts []HostVerdict `json:"hosts"`
	// Environment are the failures that lie in the server's environment
	// (a service it needs refused, a credential is missing): the check
	// could not check what they hid, and says so instead of a finding.
	Environment []Environment `json:"environment,omitempty"`
	// Skipped says what the run did not check, and why (a run without
	// Options.Dial, or on a borrowed session).
	Skipped  []string `json:"skipped,omitempty"`
	Duration float64  `json:"durationMs"`
}

// The Skipped lines.
const (
	SkippedSecond   = "not checked: what needs a second connection to the server (an unknown revision offered, the other era, no client capability declared); mcpi check opens one"
	SkippedSetLevel = "not checked: logging/setLevel, which would change the session's level; mcpi check sends it"
)

// Count returns how many findings have severity s.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Borrows says whether a front end that holds live checks the server on
// it (Options.Borrowed) rather than on connections of its own: a stdio
// server may not allow a second instance; an HTTP server is checked on
// connections of the check's own, as mcpi check does.
func Borrows(live *session.Client) bool {
	return live != nil && !transport.Describe(live.Conn()).HTTP
}

// Options say what a run may do.
type Options struct {
	// Call also calls the tools annotated read-only, with arguments made
	// from their input schemas.
	Call bool
	// Borrowed says the session is a person's (the TUI's), checked where
	// it stands: no request that changes its state is sent
	// (logging/setLevel), and no connection of the check's own is opened
	// (Dial is not used); Skipped says what that leaves unchecked.
	Borrowed bool
	// Transport names the transport, for the report.
	Transport string
	// Timeout bounds each probe request (default 10s).
	Timeout time.Duration
	// HTTP is the Streamable HTTP endpoint, for the checks of the
	// transport itself (nil for stdio and HTTP+SSE).
	HTTP *HTTPTarget
	// SSE is the legacy HTTP+SSE stream's URL, for the checks of that
	// transport's framing (nil for the other transports).
	SSE *HTTPTarget
	// Dial opens another connection to the server, for the checks that
	// need one of their own (an unknown version offered, the other era,
	// the listing an App host gets). Nil skips them. Over stdio, Run closes
	// the session first and opens them one at a time: never two instances
	// of a stdio server at once.
	Dial Dialer
	// Hosts are the hosts the server must work with (--host): a rejection
	// by one of them is an error.
	Hosts []string
	// ServerName is the server's name as the user configured it
	// (--server), which hosts prefix to tool names; "" uses serverInfo.name.
	ServerName string
	// Apps says the session declared MCP Apps (io.modelcontextprotocol/ui):
	// its tools are what an App host is listed. Otherwise the Apps rules
	// list the tools on a connection of their own that declares it
	// (through Dial), and compare.
	Apps bool
	// Progress, when set, is told what the run is checking as it goes
	// ("tools", "HTTP transport"...). It is called from Run's goroutine.
	Progress func(what string)
}

// Observer collects what the session saw while check ran: warnings about
// frames (stdout pollution, bad JSON-RPC) and server stderr. Wire it into
// the session's OnWarning before connecting.
type Observer struct {
	mu       sync.Mutex
	warnings []session.Warning
	stderr   int
}

// OnWarning records a warning of the session.
func (o *Observer) OnWarning(w session.Warning) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.warnings) < 1000 {
		o.warnings = append(o.warnings, w)
	}
}

// OnStderr counts a line the server wrote to stderr.
func (o *Observer) OnStderr() {
	o.mu.Lock()
	o.stderr++
	o.mu.Unlock()
}

// run is one check run's state.
type run struct {
	ctx     context.Context
	c       *session.Client
	opts    Options
	obs     *Observer
	rev     string
	checked map[string]bool
	found   []Finding
	// results are the results the run got, by method, to check against
	// the revision's schema.
	results map[string][]json.RawMessage
	// asked are the requests answered input_required (at most 5).
	asked []asked
	// toolList are the tools the server listed (toolsListed: the listing
	// succeeded), and resultChars the length of each one's result text
	// when --call called it.
	toolList    []mcp.Tool
	toolsListed bool
	resultChars map[string]int
	// hosts is the host matrix; env the failures of the server's
	// environment, which are no findings.
	hosts []HostVerdict
	env   []Environment
	// appsSecond says the Apps rules listed the tools on a connection
	// of their own that declared the extension.
	appsSecond bool
	// inst counts the connections open to the server (the session's is
	// one until released closes it); via describes the connection the
	// current step's findings are made on, "" for the session's.
	inst     instances
	released bool
	via      string
	// skipped are the Skipped lines of the steps.
	skipped []string
}

// Run checks the server behind c, which is connected and initialized.
// When the server is a stdio process and opts.Dial is set, Run closes c
// before the steps that open connections of their own.
func Run(ctx context.Context, c *session.Client, obs *Observer, opts Options) *Report {
	start := time.Now()
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if obs == nil {
		obs = &Observer{}
	}
	if opts.Borrowed {
		opts.Dial = nil
	}
	r := &run{ctx: ctx, c: c, opts: opts, obs: obs, rev: c.ProtocolVersion(), checked: map[string]bool{}, results: map[string][]json.RawMessage{}, resultChars: map[string]int{}}
	r.inst.open = 1 // the session's
	rep := &Report{ProtocolVersion: c.ProtocolVersion(), Era: c.Era(), Transport: opts.Transport}
	if init := c.InitializeResult(); init != nil {
		rep.Server = init.ServerInfo
	}
	for _, step := range r.steps() {
		if opts.Progress != nil && step.what != "" {
			opts.Progress(step.what)
		}
		step.do()
	}
	for id := range r.checked {
		rep.Rules = append(rep.Rules, *rules[id])
	}
	sort.Slice(rep.Rules, func(i, j int) bool { return rep.Rules[i].ID < rep.Rules[j].ID })
	rep.Findings = r.found
	rep.Hosts = r.hosts
	rep.Skipped = append(rep.Skipped, r.skipped...)
	if opts.Dial == nil {
		rep.Skipped = append(rep.Skipped, SkippedSecond)
	}
	rep.Environment = r.env
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool { return rep.Findings[i].Severity > rep.Findings[j].Severity })
	rep.Duration = float64(time.Since(start).Microseconds()) / 1000
	return rep
}

type step struct {
	what string
	do   func()
}

// steps are the run's steps in order. Those on connections of their own
// come after every step of the session's; over stdio the session is
// closed before them (releaseSession), so that no two instances of the
// server run at once.
func (r *run) steps() []step {
	appsOwn := r.appsOnOwn()
	own := []step{{"a second connection", r.secondConnection}}
	if appsOwn {
		own = append([]step{{"MCP Apps", r.apps}}, own...)
	}
	steps := []step{{"handshake", r.handshake}, {"utilities", r.utilities}, {"tools", r.tools}, {"hosts", func() { r.hosts = r.hostMatrix() }}}
	if !appsOwn {
		steps = append(steps, step{"MCP Apps", r.apps})
	}
	steps = append(steps, []step{{"resources", r.resources},
		{"prompts", r.prompts}, {"subscriptions", r.listen}, {"errors", r.unknowns}, {"results against the schema", r.conformance},
		{"HTTP transport", r.httpChecks}, {"HTTP+SSE transport", r.sseChecks}}...)
	if r.opts.Dial != nil {
		steps = append(steps, step{"", r.releaseSession})
	}
	steps = append(steps, own...)
	return append(steps, step{"the wire", r.wire}) // last: what the whole run saw
}

// check marks rules as checked.
func (r *run) check(rules ...*Rule) {
	for _, rule := range rules {
		r.checked[rule.ID] = true
	}
}

// report records a finding of rule (which is then checked too).
func (r *run) report(rule *Rule, subject string, evidence any, format string, args ...any) {
	r.check(rule)
	f := Finding{Rule: rule.ID, Severity: rule.Severity, Subject: subject, Message: fmt.Sprintf(format, args...), Source: rule.Source, Connection: r.via}
	switch e := evidence.(type) {
	case nil:
	case json.RawMessage:
		f.Evidence = e
	case []byte:
		if json.Valid(e) {
			f.Evidence = e
		} else {
			f.Evidence, _ = json.Marshal(string(e))
		}
	default:
		f.Evidence, _ = json.Marshal(e)
	}
	if r.divertEnvironment(f) {
		return
	}
	r.found = append(r.found, f)
}

// probe sends method with params and returns the raw result or the error,
// whether or not the server declared the capability it needs.
func (r *run) probe(method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.Timeout)
	defer cancel()
	var raw json.RawMessage
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	res, err := r.c.Send(ctx, method, raw, nil)
	if err != nil && r.ctx.Err() == nil && (errors.Is(err, session.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)) {
		err = &noAnswerError{method: method, after: r.opts.Timeout, err: err}
	}
	r.noteAnswer(method, raw, res, err)
	if err == nil && len(r.results[method]) < 100 {
		r.results[method] = append(r.results[method], res)
	}
	return res, err
}

// rpcCode returns the JSON-RPC error code of err, if it is one.
func rpcCode(err error) (int, bool) {
	var re *session.RPCError
	if errorsAs(err, &re) && re.RPCError != nil {
		return re.Code, true
	}
	return 0, false
}

// noAnswerError is a probe that got no answer at all within the check's
// timeout: neither a result nor an error, which JSON-RPC requires. Such a
// probe learnt nothing of the rule it was for.
type noAnswerError struct {
	method string
	after  time.Duration
	err    error
}

func (e *noAnswerError) Error() string {
	var te *session.TimeoutError
	if errors.As(e.err, &te) && te.After < e.after {
		return te.Error()
	}
	return fmt.Sprintf("%s: no answer within %v", e.method, e.after)
}

func (e *noAnswerError) Unwrap() error { return e.err }

// noAnswer reports, when err is a probe that got no answer, that the
// server left a request unanswered (errors/no-answer), naming the rule
// that could not be checked for it, and returns true; the caller then
// leaves that rule unchecked: a probe that learnt nothing is no pass.
func (r *run) noAnswer(err error, subject string, rule *Rule) bool {
	name := ""
	if rule != nil {
		name = rule.ID
	}
	return r.noAnswerFor(err, subject, name)
}

// noAnswerFor is noAnswer for what is named in words (a probe that serves
// several rules).
func (r *run) noAnswerFor(err error, subject, rule string) bool {
	var na *noAnswerError
	if !errors.As(err, &na) {
		return false
	}
	what := ""
	if rule != "" {
		what = "; " + rule + " could not be checked"
	}
	r.report(ruleErrorsNoAnswer, subject, nil, "no answer within %v: JSON-RPC requires a response to every request, a result or an error%s", na.after, what)
	return true
}

// HandshakeFailed is the report of a server whose handshake failed, so
// that nothing else could be checked: its one finding says why, and every
// host's verdict is unknown.
func HandshakeFailed(err error, transport string) *Report {
	rep := &Report{Transport: transport, Rules: []Rule{*ruleHandshakeCompletes}, Hosts: []HostVerdict{}}
	rep.Findings = []Finding{{Rule: ruleHandshakeCompletes.ID, Severity: Error, Subject: "initialize",
		Message: "the handshake failed, so nothing else could be checked: " + err.Error(), Source: ruleHandshakeCompletes.Source}}
	for _, res := range hosts.Judge(nil, hosts.Env{}, false) {
		rep.Hosts = append(rep.Hosts, HostVerdict{Host: res.Host.ID, Name: res.Host.Name, OptIn: res.Host.OptIn, Verdict: string(res.Verdict)})
	}
	return rep
}
