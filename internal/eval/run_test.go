package eval

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/chat"
	"github.com/mcpi-dev/mcpi/internal/demoserver"
	"github.com/mcpi-dev/mcpi/internal/genai"
	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

const testKey = "sk-eval-test-key-0123456789"

// demo connects to the demo server over HTTP, its frames on tap.
func demo(t *testing.T, tap transport.Tap) (*session.Client, []mcp.Tool) {
	t.Helper()
	srv := httptest.NewServer(demoserver.HTTPHandler(demoserver.Options{Era: demoserver.EraLegacy}))
	t.Cleanup(srv.Close)
	conn := transport.NewStreamableHTTP(transport.HTTPOptions{URL: srv.URL, Tap: tap})
	c, err := session.Connect(t.Context(), conn, session.Options{Timeout: 30 * time.Second})
	var tools []mcp.Tool
	if err == nil {
		t.Cleanup(func() { c.Close() })
		tools, err = c.AllTools(t.Context())
	}
	if err != nil {
		t.Fatal(err)
	}
	return c, tools
}

// fakeModel is a provider of format f on a fake scripted by turns.
func fakeModel(t *testing.T, f mcptest.LLMFormat, model string, turns ...mcptest.LLMTurn) (Model, *mcptest.FakeLLM) {
	t.Helper()
	fake := mcptest.NewFakeLLM(t, f, turns...)
	kind := map[mcptest.LLMFormat]string{mcptest.LLMAnthropic: "anthropic", mcptest.LLMOpenAIChat: "openai", mcptest.LLMOpenAIResponses: "openai-responses"}[f]
	spec := kind + ":" + model
	p, err := llm.Parse(spec, llm.Options{HTTPClient: transport.NewHTTPClient(nil, transport.EgressPolicy{}), BaseURL: fake.URL, APIKey: testKey, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return Model{Spec: spec, Provider: p}, fake
}

var (
	callAdd = mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "c1", Name: "add", Args: `{"a":2,"b":3}`}}}
	say5    = mcptest.LLMTurn{Text: "2 + 3 = 5."}
)

// good calls add and answers, runs times; half calls add half the time.
func good(runs int) []mcptest.LLMTurn {
	var out []mcptest.LLMTurn
	for range runs {
		out = append(out, callAdd, say5)
	}
	return out
}

func half(runs int) []mcptest.LLMTurn {
	var out []mcptest.LLMTurn
	for i := range runs {
		if i%2 == 0 {
			out = append(out, callAdd, say5)
		} else {
			out = append(out, mcptest.LLMTurn{Text: "I think it is 5."})
		}
	}
	return out
}

// addCase is the case of testdata/adds.yaml: add called with a = 2, and
// the answer 5.
var addCase = func() string {
	b, err := os.ReadFile("testdata/adds.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func mustParse(t *testing.T, s string) []*File {
	t.Helper()
	f, err := Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	f.Path = "cases.yaml"
	return []*File{f}
}

// TestTwoModels: against the demo server, a model that always calls the
// right tool passes 10 of 10 runs, one that calls it half the time 5 of
// 10; the intervals are Wilson's; with each as the other's baseline, the
// gate sees B's drop from A (Fisher, p = 0.016) and not A's rise from B.
func TestTwoModels(t *testing.T) {
	c, tools := demo(t, nil)
	const runs = 10
	a, _ := fakeModel(t, mcptest.LLMAnthropic, "claude-a", good(runs)...)
	b, _ := fakeModel(t, mcptest.LLMOpenAIChat, "gpt-b", half(runs)...)
	files := mustParse(t, addCase)
	// One run per provider at a time: each fake's turns are in order.
	opts := Options{Models: []Model{a, b}, Server: chat.SessionServer(c), Tools: tools, Runs: runs, Concurrency: 1}
	rep := Run(context.Background(), files, opts)
	if len(rep.Results) != 2 {
		t.Fatalf("%d results", len(rep.Results))
	}
	ra, rb := rep.Results[0], rep.Results[1]
	if ra.Model != "anthropic:claude-a" || ra.Passed != 10 || ra.Runs != 10 || !near(ra.Interval[0], 0.7224672001) || ra.Interval[1] != 1 {
		t.Errorf("A: %d/%d %v", ra.Passed, ra.Runs, ra.Interval)
	}
	if rb.Passed != 5 || !near(rb.Interval[0], 0.2365930905) || !near(rb.Interval[1], 0.7634069095) {
		t.Errorf("B: %d/%d %v", rb.Passed, rb.Runs, rb.Interval)
	}
	if len(rb.Failures) != 2 || rb.Failures[0].Runs != 5 || !strings.Contains(rb.Failures[0].Detail, "add was not called") {
		t.Errorf("B's failures: %+v", rb.Failures)
	}
	if ra.InputTokens != 10*2*10 || ra.OutputTokens != 10*2*5 || ra.CostUSD != nil {
		t.Errorf("A's tokens %d/%d, cost %v (the fake model has no price)", ra.InputTokens, ra.OutputTokens, ra.CostUSD)
	}
	if d := ra.RunDetails[0]; len(d.Calls) != 1 || d.Calls[0].Tool != "add" || d.Text != "2 + 3 = 5." || d.Stop != "done" {
		t.Errorf("A's first run: %+v", d)
	}

	// Each model alone, then each as the other's baseline.
	a2, _ := fakeModel(t, mcptest.LLMAnthropic, "claude-a", good(runs)...)
	b2, _ := fakeModel(t, mcptest.LLMOpenAIChat, "gpt-b", half(runs)...)
	opts.Models = []Model{a2}
	repA := roundTrip(t, Run(context.Background(), files, opts))
	opts.Models = []Model{b2}
	repB := roundTrip(t, Run(context.Background(), files, opts))
	repA.Compare(repB, "b.json")
	if v := repA.Results[0].Against; v.Verdict != VerdictNone || v.Model != "openai:gpt-b" {
		t.Errorf("A against B: %+v", v)
	}
	if len(repA.Regressions()) != 0 {
		t.Error("A regressed against B")
	}
	repB.Compare(repA, "a.json")
	if v := repB.Results[0].Against; v.Verdict != VerdictRegression || v.Test != "fisher" || !near(v.P, 3003.0/184756) {
		t.Errorf("B against A: %+v", v)
	}
	if len(repB.Regressions()) != 1 {
		t.Error("B did not regress against A")
	}
	var md bytes.Buffer
	repB.Markdown(&md)
	if !strings.Contains(md.String(), "| adds | openai:gpt-b | 5/10 (50%) | 24–76% |") || !strings.Contains(md.String(), "**regression (was 10/10 with anthropic:claude-a; fisher test, p = 0.0163)**") {
		t.Errorf("markdown:\n%s", md.String())
	}
	x, err := repB.JUnit()
	if err != nil || !strings.Contains(string(x), `failures="1"`) {
		t.Errorf("junit %v:\n%s", err, x)
	}
}

// roundTrip is a report as a baseline file reads it back.
func roundTrip(t *testing.T, rep *Report) *Report {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(testKey)) {
		t.Fatalf("the key is in the report: %s", b)
	}
	var out Report
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// TestInsufficientData: under 5 runs, a drop is no regression, and the
// report says why.
func TestInsufficientData(t *testing.T) {
	c, tools := demo(t, nil)
	files := mustParse(t, addCase)
	a, _ := fakeModel(t, mcptest.LLMOpenAIChat, "gpt-a", good(3)...)
	b, _ := fakeModel(t, mcptest.LLMOpenAIChat, "gpt-b", mcptest.LLMTurn{Text: "no"}, mcptest.LLMTurn{Text: "no"}, mcptest.LLMTurn{Text: "no"})
	base := Run(context.Background(), files, Options{Models: []Model{a}, Server: chat.SessionServer(c), Tools: tools, Runs: 3, Concurrency: 1})
	cur := Run(context.Background(), files, Options{Models: []Model{b}, Server: chat.SessionServer(c), Tools: tools, Runs: 3, Concurrency: 1})
	cur.Compare(base, "base.json")
	if v := cur.Results[0].Against; v.Verdict != VerdictInsufficient || len(cur.Regressions()) != 0 {
		t.Errorf("%+v", v)
	}
	var text bytes.Buffer
	cur.Text(&text)
	if !strings.Contains(text.String(), "insufficient data (was 3/3 with openai:gpt-a; 5 runs are needed on each side)") {
		t.Errorf("text:\n%s", text.String())
	}
}

// TestJudge: a judge's verdict passes or fails the rubric; a judge that
// answers garbage fails the check and says so; the judge's request holds
// the rubric and the run, and its turn is a model event of its own.
func TestJudge(t *testing.T) {
	c, tools := demo(t, nil)
	files := mustParse(t, `judge: openai:judge
cases:
  - name: explains
    prompt: What is 2 + 3?
    expect:
      rubric: The answer gives the sum, 5.
`)
	m, _ := fakeModel(t, mcptest.LLMAnthropic, "claude-a", say5, say5, say5)
	judge, jfake := fakeModel(t, mcptest.LLMOpenAIChat, "judge",
		mcptest.LLMTurn{Text: `{"pass": true, "reason": "it says 5"}`},
		mcptest.LLMTurn{Text: `{"pass": false, "reason": "no"}`},
		mcptest.LLMTurn{Text: "Sure! The answer is great. PASS"})
	var mu sync.Mutex
	judged := 0
	tap := transport.TapFunc(func(e transport.Event) {
		if tu, _ := genai.Decode(e.Data); tu.Purpose == "judge" {
			mu.Lock()
			judged++
			mu.Unlock()
		}
	})
	rep := Run(context.Background(), files, Options{Models: []Model{m}, Judges: map[string]llm.Provider{"openai:judge": judge.Provider}, Server: chat.SessionServer(c), Tools: tools, Runs: 3, Concurrency: 1,
		Trace: func(RunID) (transport.Tap, func() error, error) { return tap, func() error { return nil }, nil }})
	r := rep.Results[0]
	if r.Passed != 1 {
		t.Fatalf("passed %d, want 1: %+v", r.Passed, r.RunDetails)
	}
	// Runs wait for their turn in no set order: find the garbage.
	var details []string
	for _, d := range r.RunDetails {
		details = append(details, d.Checks[0].Detail)
	}
	if d := strings.Join(details, "\n"); !strings.Contains(d, "the judge's answer is not a verdict") || !strings.Contains(d, "PASS") || !strings.Contains(d, "the judge: no") {
		t.Errorf("verdicts:\n%s", d)
	}
	if body := string(jfake.Requests()[0].Body); !strings.Contains(body, "The answer gives the sum, 5.") || !strings.Contains(body, "2 + 3 = 5.") {
		t.Errorf("the judge's request: %s", body)
	}
	if judged != 3 {
		t.Errorf("%d judge events, want 3 (one request a run)", judged)
	}
	// No judge at all: the rubric fails, saying so.
	m2, _ := fakeModel(t, mcptest.LLMAnthropic, "claude-a", say5)
	rep = Run(context.Background(), files, Options{Models: []Model{m2}, Server: chat.SessionServer(c), Tools: tools})
	if ch := rep.Results[0].RunDetails[0].Checks[0]; ch.OK || ch.Detail != "the judge failed: no judge model" {
		t.Errorf("no judge: %+v", ch)
	}
}

// TestProviderFails: a provider that refuses every run fails every run,
// its error (without the key) in the report; AllModelErrors says so.
func TestProviderFails(t *testing.T) {
	c, tools := demo(t, nil)
	files := mustParse(t, addCase)
	var turns []mcptest.LLMTurn
	for range 4 {
		turns = append(turns, mcptest.LLMTurn{Status: http.StatusUnauthorized})
	}
	m, _ := fakeModel(t, mcptest.LLMOpenAIChat, "gpt-a", turns...)
	rep := roundTrip(t, Run(context.Background(), files, Options{Models: []Model{m}, Server: chat.SessionServer(c), Tools: tools, Runs: 4}))
	r := rep.Results[0]
	if !rep.AllModelErrors() || r.Errors != 4 || r.Passed != 0 || len(r.Failures) != 1 || r.Failures[0].Check != "model" || r.Failures[0].Runs != 4 {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(rep.FirstError(), "401") {
		t.Errorf("error %q", rep.FirstError())
	}
}

// TestToolsFrom: the model is shown the snapshot's description and
// schema, not the server's; its call still runs on the server.
func TestToolsFrom(t *testing.T) {
	c, server := demo(t, nil)
	snapDoc := `{"format":"mcpi.surface/1","serverInfo":{},"capabilities":{},"clientCapabilities":{},
"tools":[{"name":"add","description":"EDITED: adds two integers","inputSchema":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}},
{"name":"gone","description":"not on the server"}],"resources":[],"resourceTemplates":[],"prompts":[]}`
	snap, err := surfaceRead(snapDoc)
	if err != nil {
		t.Fatal(err)
	}
	tools, notes, err := ToolsFrom(snap, server)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || !strings.Contains(strings.Join(notes, "\n"), "gone: in the snapshot, not on the server") || !strings.Contains(strings.Join(notes, "\n"), "echo: on the server, not in the snapshot") {
		t.Errorf("tools %d, notes %v", len(tools), notes)
	}
	m, fake := fakeModel(t, mcptest.LLMOpenAIChat, "gpt-a", good(1)...)
	var ops []string
	tap := transport.TapFunc(func(e transport.Event) {
		tu, _ := genai.Decode(e.Data)
		ops = append(ops, e.Dir.String()+" "+tu.Op)
	})
	rep := Run(context.Background(), mustParse(t, addCase), Options{Models: []Model{m}, Server: chat.SessionServer(c), Tools: tools, Tap: tap})
	if rep.Results[0].Passed != 1 {
		t.Errorf("%+v", rep.Results[0].RunDetails)
	}
	// The command's tap (--otlp-endpoint) sees the run's model events.
	if got := strings.Join(ops, ","); got != "send chat,recv chat,send execute_tool,recv execute_tool,send chat,recv chat" {
		t.Errorf("the tap saw %s", got)
	}
	body := string(fake.Requests()[0].Body)
	if !strings.Contains(body, "EDITED: adds two integers") || strings.Contains(body, `"echo"`) {
		t.Errorf("the model was not shown the snapshot's tools: %s", body)
	}
	if !strings.Contains(string(fake.Requests()[1].Body), "5") {
		t.Errorf("the server's result did not reach the model")
	}
}

// TestRecord: each run writes its own trace, with its model events and
// the frames of its own tool calls, though the runs share a session and
// run concurrently.
func TestRecord(t *testing.T) {
	router := NewRouter()
	c, tools := demo(t, router)
	const runs = 6
	m, _ := fakeModel(t, mcptest.LLMOpenAIChat, "gpt-a", good(runs)...)
	var mu sync.Mutex
	traces := map[int]*bytes.Buffer{}
	rec := func(id RunID) (transport.Tap, func() error, error) {
		var buf bytes.Buffer
		mu.Lock()
		traces[id.N] = &buf
		mu.Unlock()
		w := record.NewWriter(&buf, record.Header{}, record.Options{})
		return w, w.Close, nil
	}
	// Concurrency 1: the one fake's turns are in order. The Router holds
	// whatever the concurrency.
	rep := Run(context.Background(), mustParse(t, addCase), Options{Models: []Model{m}, Server: chat.SessionServer(c), Tools: tools, Runs: runs, Concurrency: 1, Trace: rec, Frames: router})
	if rep.Results[0].Passed != runs {
		t.Fatalf("%+v", rep.Results[0].RunDetails)
	}
	for n := 1; n <= runs; n++ {
		r, err := record.NewReader(bytes.NewReader(traces[n].Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		var model, calls, results int
		if err := r.Each(func(e record.Event) {
			ev, ok := e.TransportEvent()
			switch {
			case !ok:
			case ev.Kind == transport.KindModel:
				model++
			case ev.Dir == transport.Outgoing && strings.Contains(string(ev.Data), `"tools/call"`):
				calls++
			case ev.Dir == transport.Incoming && strings.Contains(string(ev.Data), `"result"`):
				results++
			}
		}); err != nil {
			t.Fatal(err)
		}
		if model != 6 || calls != 1 || results != 1 {
			t.Errorf("run %d's trace: %d model events, %d calls, %d results; want 6, 1, 1", n, model, calls, results)
		}
	}
}

// counting is a provider that answers text and counts the streams in
// flight.
type counting struct {
	name         string
	text         string // the answer ("5" when empty)
	mu           sync.Mutex
	now, maxSeen int
}

func (c *counting) Name() string  { return c.name }
func (c *counting) Model() string { return "m" }
func (c *counting) Stream(ctx context.Context, req *llm.Request, on func(llm.Event)) (*llm.Response, error) {
	c.mu.Lock()
	c.now++
	c.maxSeen = max(c.maxSeen, c.now)
	c.mu.Unlock()
	defer func() { c.mu.Lock(); c.now--; c.mu.Unlock() }()
	text := cmp.Or(c.text, "5")
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: text}}}, Finish: llm.FinishEndTurn}, nil
}

// TestConcurrencyBound: no more runs of a provider are in flight than
// --concurrency.
func TestConcurrencyBound(t *testing.T) {
	p1, p2 := &counting{name: "one"}, &counting{name: "two"}
	files := mustParse(t, "cases:\n  - name: a\n    prompt: p\n    expect: {text: {contains: '5'}}\n")
	var told []int
	progress := func(done, total, failed int) {
		if total != 80 || failed != 0 {
			t.Errorf("progress %d/%d, %d failed", done, total, failed)
		}
		told = append(told, done)
	}
	rep := Run(context.Background(), files, Options{Models: []Model{{"one:m", p1}, {"two:m", p2}}, Runs: 40, Concurrency: 2, Progress: progress})
	if rep.Results[0].Passed != 40 || rep.Results[1].Passed != 40 {
		t.Fatalf("%+v", rep.Results[0])
	}
	if len(told) != 80 || told[79] != 80 {
		t.Errorf("progress told %d times, last %v", len(told), told[len(told)-1:])
	}
	if p1.maxSeen > 2 || p2.maxSeen > 2 {
		t.Errorf("in flight at most %d and %d, want 2", p1.maxSeen, p2.maxSeen)
	}
}

// TestRedact: every text a model, a server or a provider wrote in the
// report crosses the redactor, the arguments of calls too.
func TestRedact(t *testing.T) {
	const secret = "hunter2-secret"
	rep := &Report{Results: []*Result{{Failures: []Failure{{Detail: "saw " + secret}}, RunDetails: []RunResult{{
		Text: "the secret is " + secret, Error: secret, Checks: []Check{{Detail: secret}},
		Calls: []Call{{Tool: "echo", Arguments: json.RawMessage(`{"text":"` + secret + `"}`)}, {Tool: "add", Arguments: json.RawMessage(`{"a":1}`)}},
	}}}}}
	rep.Redact(func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") })
	b, _ := json.Marshal(rep)
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), `"arguments":{"a":1}`) {
		t.Errorf("%s", b)
	}
}

// TestCancelled: runs cut short by the caller are reported as such, and
// are no verdict on the provider.
func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &counting{name: "one"}
	rep := Run(ctx, mustParse(t, addCase), Options{Models: []Model{{"one:m", p}}, Runs: 3})
	if rep.AllModelErrors() || rep.Results[0].Passed != 0 || rep.Results[0].Errors != 3 {
		t.Errorf("%+v", rep.Results[0])
	}
	for _, d := range rep.Results[0].RunDetails {
		if d.Stop != string(chat.StopCancelled) {
			t.Errorf("run %d: stop %q", d.N, d.Stop)
		}
	}
}

// TestCompareSameFile: of two files' cases of one name, a result is
// compared with its own file's.
func TestCompareSameFile(t *testing.T) {
	res := func(file string, passed int) *Result {
		return &Result{File: file, Case: "c", Model: "m", Runs: 10, Passed: passed}
	}
	base := &Report{Results: []*Result{res("a.yaml", 10), res("b.yaml", 0)}}
	cur := &Report{Results: []*Result{res("a.yaml", 10), res("b.yaml", 0)}}
	cur.Compare(base, "base.json")
	for _, r := range cur.Results {
		if r.Against.Passed != r.Passed {
			t.Errorf("%s compared with %d/%d", r.File, r.Against.Passed, r.Against.Runs)
		}
	}
}

// TestLongAnswer: the checks read the whole of a long answer; the report
// keeps its start.
func TestLongAnswer(t *testing.T) {
	p := &counting{name: "one", text: strings.Repeat("blah ", 20000) + "the end"}
	rep := Run(context.Background(), mustParse(t, "cases:\n  - name: a\n    prompt: p\n    expect: {text: {contains: the end}}\n"), Options{Models: []Model{{"one:m", p}}})
	d := rep.Results[0].RunDetails[0]
	if !d.Pass || len(d.Text) > 5000 || !strings.HasSuffix(d.Text, "more bytes]") {
		t.Errorf("pass %v, text of %d bytes", d.Pass, len(d.Text))
	}
}
