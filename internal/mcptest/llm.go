package mcptest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// LLMFormat is the wire format a fake provider speaks.
type LLMFormat int

const (
	// LLMAnthropic is the Anthropic Messages API: POST /v1/messages, SSE
	// events message_start … message_stop.
	LLMAnthropic LLMFormat = iota + 1
	// LLMOpenAIChat is OpenAI Chat Completions: POST /v1/chat/completions,
	// data-only SSE chunks ending with data: [DONE].
	LLMOpenAIChat
	// LLMOpenAIResponses is the OpenAI Responses API: POST /v1/responses,
	// typed SSE events ending with response.completed.
	LLMOpenAIResponses
	// LLMGemini is Gemini's OpenAI-compatible Chat Completions: POST
	// /v1beta/openai/chat/completions, chunks as LLMOpenAIChat's but as
	// Gemini sends them: each tool call whole in one delta with no index
	// (parallel calls included), a thought signature on it
	// (extra_content.google.thought_signature), and finish_reason "stop"
	// after tool calls. A request whose assistant tool call the fake made
	// comes back without its signature is refused with Gemini's 400.
	LLMGemini
)

// LLMCall is a tool call a fake model makes. Args is sent as it is (a
// test makes it malformed on purpose), in pieces of Split bytes (default
// 7), each a delta of its own.
type LLMCall struct {
	ID, Name, Args string
	Split          int
}

// LLMTurn is what a fake provider answers to one request: text (sent in
// pieces of four bytes), tool calls, usage and a stop reason, or one of
// the hostile behaviours.
type LLMTurn struct {
	Text  string
	Calls []LLMCall
	// InputTokens and OutputTokens are the usage reported (defaults 10 and
	// 5).
	InputTokens, OutputTokens int64
	// Stop overrides the provider's stop reason (the format's own word).
	Stop string

	// Status answers with this HTTP status and Body (a JSON error of the
	// format when empty), with Retry-After when given.
	Status     int
	RetryAfter string
	Body       string
	// RedirectTo answers 307 to this URL.
	RedirectTo string
	// Hang sends the stream's first event and then nothing, until the
	// client goes away; Stall sends not even the headers.
	Hang, Stall bool
	// Flood streams this many bytes of text deltas (or until the client
	// goes away).
	Flood int64
	// Drip sends Text one token (four bytes) per Drip.
	Drip time.Duration
	// StreamError sends, after the stream's first event, an error event
	// of the format with this error type ("overloaded_error",
	// "server_error") and ends the stream.
	StreamError string
	// NoEnd leaves out the end of the stream (message_stop; the finish
	// chunk, the usage chunk and [DONE]; response.completed).
	NoEnd bool
}

// LLMRequest is a request a fake provider received.
type LLMRequest struct {
	Path   string
	Header http.Header
	Body   []byte
}

// JSON decodes the request's body.
func (r LLMRequest) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v", err)
	}
	return m
}

// FakeLLM is a provider on a loopback httptest server, scripted by turns:
// each request takes the next turn; past the last, it answers 500.
type FakeLLM struct {
	// URL is the base URL to give the SDK (the root for Anthropic, /v1/
	// for OpenAI).
	URL    string
	Format LLMFormat
	// Model is the model the fake says answered (default: the model asked
	// for, with "-fake").
	Model string

	srv      *httptest.Server
	stop     chan struct{}
	written  atomic.Int64
	mu       sync.Mutex
	turns    []LLMTurn
	next     int
	requests []LLMRequest
}

// NewFakeLLM starts a fake provider of format f; it is closed when the
// test ends.
func NewFakeLLM(t testing.TB, f LLMFormat, turns ...LLMTurn) *FakeLLM {
	t.Helper()
	fk := StartFakeLLM(f, turns...)
	t.Cleanup(fk.Close)
	return fk
}

// StartFakeLLM starts a fake provider of format f on a loopback port, for
// a program of its own (cmd/fakellm, the TUI's end-to-end script); Close
// stops it.
func StartFakeLLM(f LLMFormat, turns ...LLMTurn) *FakeLLM {
	fk := &FakeLLM{Format: f, turns: turns, stop: make(chan struct{})}
	fk.srv = httptest.NewServer(http.HandlerFunc(fk.serve))
	fk.URL = fk.srv.URL + "/"
	switch f {
	case LLMGemini:
		fk.URL += "v1beta/openai/"
	case LLMOpenAIChat, LLMOpenAIResponses:
		fk.URL += "v1/"
	}
	return fk
}

// Close stops the fake and ends the streams it is sending.
func (f *FakeLLM) Close() {
	close(f.stop)
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// Requests returns the requests received so far.
func (f *FakeLLM) Requests() []LLMRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]LLMRequest(nil), f.requests...)
}

// Written is how many bytes of response bodies the fake wrote.
func (f *FakeLLM) Written() int64 { return f.written.Load() }

func (f *FakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	f.mu.Lock()
	f.requests = append(f.requests, LLMRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	var turn LLMTurn
	ok := f.next < len(f.turns)
	if ok {
		turn = f.turns[f.next]
		f.next++
	}
	f.mu.Unlock()
	want := map[LLMFormat]string{LLMAnthropic: "/v1/messages", LLMOpenAIChat: "/v1/chat/completions", LLMOpenAIResponses: "/v1/responses",
		LLMGemini: "/v1beta/openai/chat/completions"}[f.Format]
	switch {
	case r.URL.Path != want:
		http.Error(w, `{"error":{"message":"no such path"}}`, http.StatusNotFound)
		return
	case f.Format == LLMGemini && unsigned(body):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		n, _ := io.WriteString(w, `[{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts.","status":"INVALID_ARGUMENT"}}]`)
		f.written.Add(int64(n))
		return
	case !ok:
		http.Error(w, `{"error":{"message":"the fake has no more turns scripted"}}`, http.StatusInternalServerError)
		return
	case turn.RedirectTo != "":
		http.Redirect(w, r, turn.RedirectTo, http.StatusTemporaryRedirect)
		return
	case turn.Status != 0:
		if turn.RetryAfter != "" {
			w.Header().Set("Retry-After", turn.RetryAfter)
		}
		if turn.Body == "" {
			turn.Body = fmt.Sprintf(`{"type":"error","error":{"type":"error","message":"scripted status %d"}}`, turn.Status)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(turn.Status)
		n, _ := io.WriteString(w, turn.Body)
		f.written.Add(int64(n))
		return
	}
	if turn.Stall {
		(&sse{f: f, r: r}).hang()
		return
	}
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	model := f.Model
	if model == "" {
		model = req.Model + "-fake"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, f: f, r: r}
	switch f.Format {
	case LLMAnthropic:
		s.anthropic(turn, model)
	case LLMOpenAIChat:
		s.chat(turn, model)
	case LLMOpenAIResponses:
		s.responses(turn, model)
	case LLMGemini:
		s.gemini(turn, model)
	}
}

// geminiSignature is the thought signature the Gemini fake gives a call.
func geminiSignature(id string) string { return "sig-" + id }

// unsigned says whether a Chat Completions request sends back a tool call
// the Gemini fake made (its id starts with "function-call-") without the
// call's thought signature.
func unsigned(body []byte) bool {
	var req struct {
		Messages []struct {
			ToolCalls []struct {
				ID    string `json:"id"`
				Extra struct {
					Google struct {
						Signature string `json:"thought_signature"`
					} `json:"google"`
				} `json:"extra_content"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return false
	}
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			if strings.HasPrefix(c.ID, "function-call-") && c.Extra.Google.Signature != geminiSignature(c.ID) {
				return true
			}
		}
	}
	return false
}

// gemini writes a turn as Gemini's OpenAI-compatible endpoint streams it.
func (s *sse) gemini(t LLMTurn, model string) {
	in, out := usage(t)
	chunk := func(d map[string]any, finish any, u map[string]any) {
		m := map[string]any{"id": "gemini-fake", "object": "chat.completion.chunk", "created": 1, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}}
		if u != nil {
			m["usage"] = u
		}
		s.event("", m)
	}
	s.text(t, func(p string) { chunk(map[string]any{"role": "assistant", "content": p}, nil, nil) })
	for _, c := range t.Calls {
		chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
			"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args},
			"extra_content": map[string]any{"google": map[string]any{"thought_signature": geminiSignature(c.ID)}},
		}}}, nil, nil)
	}
	if t.NoEnd {
		return
	}
	chunk(map[string]any{"role": "assistant"}, cmp.Or(t.Stop, "stop"), map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out})
	s.raw([]byte("data: [DONE]\n\n"))
}

// sse writes one response stream; a write that fails (the client went
// away) stops every later one.
type sse struct {
	w    http.ResponseWriter
	f    *FakeLLM
	r    *http.Request
	dead bool
}

func (s *sse) raw(b []byte) {
	if s.dead {
		return
	}
	n, err := s.w.Write(b)
	s.f.written.Add(int64(n))
	if err != nil {
		s.dead = true
		return
	}
	if fl, ok := s.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// event writes an SSE event: "event: NAME" when name is given, and the
// JSON of v as its data.
func (s *sse) event(name string, v any) {
	b, _ := json.Marshal(v)
	var sb strings.Builder
	if name != "" {
		sb.WriteString("event: " + name + "\n")
	}
	sb.WriteString("data: ")
	sb.Write(b)
	sb.WriteString("\n\n")
	s.raw([]byte(sb.String()))
}

// hang waits for the client to go away.
func (s *sse) hang() {
	select {
	case <-s.r.Context().Done():
	case <-s.f.stop:
	}
	s.dead = true
}

// pieces cuts text in pieces of n bytes.
func pieces(text string, n int) []string {
	if n <= 0 {
		n = 4
	}
	var out []string
	for len(text) > n {
		out = append(out, text[:n])
		text = text[n:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}

// text streams the turn's text through delta, honouring Flood and Drip.
func (s *sse) text(t LLMTurn, delta func(string)) {
	if t.Flood > 0 {
		chunk := strings.Repeat("flood ", 32<<10/6)
		for sent := int64(0); sent < t.Flood && !s.dead; sent += int64(len(chunk)) {
			delta(chunk)
		}
		return
	}
	for i, p := range pieces(t.Text, 4) {
		if t.Drip > 0 && i > 0 {
			select {
			case <-time.After(t.Drip):
			case <-s.r.Context().Done():
				s.dead = true
			case <-s.f.stop:
				s.dead = true
			}
		}
		delta(p)
	}
}

func usage(t LLMTurn) (int64, int64) {
	in, out := t.InputTokens, t.OutputTokens
	if in == 0 {
		in = 10
	}
	if out == 0 {
		out = 5
	}
	return in, out
}

func (s *sse) anthropic(t LLMTurn, model string) {
	in, out := usage(t)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": in, "output_tokens": 1},
	}})
	if t.Hang {
		s.hang()
		return
	}
	if t.StreamError != "" {
		s.event("error", map[string]any{"type": "error", "error": map[string]any{"type": t.StreamError, "message": "scripted " + t.StreamError}})
		return
	}
	index := 0
	if t.Text != "" || t.Flood > 0 {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		s.text(t, func(p string) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": p}})
		})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for _, c := range t.Calls {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, p := range pieces(c.Args, splitOf(c)) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	stop := t.Stop
	if stop == "" {
		stop = "end_turn"
		if len(t.Calls) > 0 {
			stop = "tool_use"
		}
	}
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
	if !t.NoEnd {
		s.event("message_stop", map[string]any{"type": "message_stop"})
	}
}

func splitOf(c LLMCall) int {
	if c.Split > 0 {
		return c.Split
	}
	return 7
}

func (s *sse) chat(t LLMTurn, model string) {
	in, out := usage(t)
	chunk := func(choices []any, extra map[string]any) {
		m := map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": model, "choices": choices}
		for k, v := range extra {
			m[k] = v
		}
		s.event("", m)
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}
	}
	chunk(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	if t.Hang {
		s.hang()
		return
	}
	if t.StreamError != "" {
		s.event("", map[string]any{"error": map[string]any{"type": t.StreamError, "message": "scripted " + t.StreamError}})
		return
	}
	s.text(t, func(p string) { chunk(delta(map[string]any{"content": p}, nil), nil) })
	for i, c := range t.Calls {
		chunk(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil), nil)
		for _, p := range pieces(c.Args, splitOf(c)) {
			chunk(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil), nil)
		}
	}
	stop := t.Stop
	if stop == "" {
		stop = "stop"
		if len(t.Calls) > 0 {
			stop = "tool_calls"
		}
	}
	if t.NoEnd {
		return
	}
	chunk(delta(map[string]any{}, stop), nil)
	chunk([]any{}, map[string]any{"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}})
	s.raw([]byte("data: [DONE]\n\n"))
}

func (s *sse) responses(t LLMTurn, model string) {
	in, out := usage(t)
	seq := 0
	ev := func(typ string, m map[string]any) {
		m["type"] = typ
		m["sequence_number"] = seq
		seq++
		s.event(typ, m)
	}
	resp := func(status string, output []any) map[string]any {
		r := map[string]any{"id": "resp_fake", "object": "response", "created_at": 1, "status": status, "model": model, "output": output}
		if status == "completed" {
			r["usage"] = map[string]any{"input_tokens": in, "output_tokens": out, "total_tokens": in + out,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
		}
		return r
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
	if t.Hang {
		s.hang()
		return
	}
	if t.StreamError != "" {
		ev("error", map[string]any{"code": t.StreamError, "message": "scripted " + t.StreamError, "param": nil})
		return
	}
	var output []any
	idx := 0
	if t.Text != "" || t.Flood > 0 {
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": "msg_fake", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		var all strings.Builder
		s.text(t, func(p string) {
			if t.Flood == 0 {
				all.WriteString(p)
			}
			ev("response.output_text.delta", map[string]any{"item_id": "msg_fake", "output_index": idx, "content_index": 0, "delta": p})
		})
		ev("response.output_text.done", map[string]any{"item_id": "msg_fake", "output_index": idx, "content_index": 0, "text": all.String()})
		item := map[string]any{"id": "msg_fake", "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": all.String(), "annotations": []any{}}}}
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	for i, c := range t.Calls {
		id := fmt.Sprintf("fc_%d", i+1)
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": c.ID, "name": c.Name, "arguments": ""}})
		for _, p := range pieces(c.Args, splitOf(c)) {
			ev("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": idx, "delta": p})
		}
		ev("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": idx, "name": c.Name, "arguments": c.Args})
		item := map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": c.ID, "name": c.Name, "arguments": c.Args}
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	if t.NoEnd {
		return
	}
	status := "completed"
	r := resp(status, output)
	if t.Stop != "" {
		r["status"] = "incomplete"
		r["incomplete_details"] = map[string]any{"reason": t.Stop}
		ev("response.incomplete", map[string]any{"response": r})
		return
	}
	ev("response.completed", map[string]any{"response": r})
}
