package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// count is how many of the strings contain sub.
func count(ss []string, sub string) int {
	n := 0
	for _, s := range ss {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// Over HTTP, a duplicated request of the host reaches the server twice:
// the host gets the first answer, the copy's answer is recorded.
func TestHTTPDuplicateRequest(t *testing.T) {
	p := startHTTP(t, nil, "faults:\n  - match: dir:out method:tools/call\n    duplicate: 2\n", 1)
	p.host.Initialize(t)
	a := p.host.Post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`)
	if len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte(`"sum":3`)) {
		t.Fatalf("the host's answer %d %q", a.Status, a.Frames)
	}
	p.tap.waitFor(t, "the copy's answer", func(evs []transport.Event) bool {
		return count(framesOf(evs, transport.Incoming), `"sum":3`) == 2
	})
	if n := count(p.upstreamSaw(), `"tools/call"`); n != 2 {
		t.Errorf("the upstream got the call %d times, want 2", n)
	}
	if ch := p.changes(t); len(ch) != 1 || ch[0].Action != "duplicate" {
		t.Errorf("changes %+v", ch)
	}
}

// Over HTTP, a request of the host held back by a reorder reaches the
// server after the next one; alone, it goes after reorderWait.
func TestHTTPReorderRequests(t *testing.T) {
	p := startHTTP(t, jsonUpstream, "faults:\n  - match: dir:out id:2\n    reorder: 1\n", 1)
	first := postAsync(t, p.host, ping)
	p.waitChange(t)
	if a := p.host.Post(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); len(a.Frames) != 1 {
		t.Fatalf("the second request's answer %q", a.Frames)
	}
	if a := <-first; len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte(`"id":2`)) {
		t.Fatalf("the held request's answer %q %v", a.Frames, a.Err)
	}
	if saw := p.upstreamSaw(); len(saw) != 2 || !strings.Contains(saw[0], `"id":3`) || !strings.Contains(saw[1], `"id":2`) {
		t.Errorf("the upstream saw %q, want id 3 before id 2", saw)
	}
	old := reorderWait.Swap(int64(time.Millisecond))
	t.Cleanup(func() { reorderWait.Store(old) })
	p = startHTTP(t, jsonUpstream, "faults:\n  - match: dir:out id:2\n    reorder: 3\n", 1)
	if a := p.host.Post(t, ping); len(a.Frames) != 1 {
		t.Errorf("a request held back with nothing behind it: %q %v", a.Frames, a.Err)
	}
}

// sampleCall calls the demo server's tool that asks the host's model.
const sampleCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sample","arguments":{"prompt":"hi"}}}`

// initSampling starts a session whose host says it samples.
func initSampling(t *testing.T, p *httpProxied) {
	t.Helper()
	if a := p.host.Post(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"mcptest-host","version":"1"}}}`); a.Status != 200 {
		t.Fatalf("initialize %d %q", a.Status, a.Frames)
	}
	p.host.Post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// Over HTTP, the server's request in an SSE event answered in the host's
// place: by a fault (an error) and at a breakpoint (a result); the
// answer reaches the server with the host's session, the host never sees
// the request, and the tool's answer says what the server got.
func TestHTTPServersRequestAnsweredInPlace(t *testing.T) {
	t.Run("fault", func(t *testing.T) {
		p := startHTTP(t, nil, "faults:\n  - match: method:sampling/createMessage\n    error: {code: -32001, message: no model here}\n", 1)
		initSampling(t, p)
		a := p.host.Post(t, sampleCall)
		if len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte(`"id":2`)) || bytes.Contains(a.Frames[0], []byte(`"method"`)) {
			t.Fatalf("the host got %q, want the call's answer alone", a.Frames)
		}
		if !bytes.Contains(a.Frames[0], []byte("no model here")) {
			t.Errorf("the tool's answer does not tell the server's error: %s", a.Frames[0])
		}
		if n := count(p.upstreamSaw(), `"message":"no model here"`); n != 1 {
			t.Errorf("the upstream got the answer %d times: %q", n, p.upstreamSaw())
		}
		if ch := p.changes(t); len(ch) != 1 || ch[0].Action != "error" {
			t.Errorf("changes %+v", ch)
		}
	})
	t.Run("breakpoint", func(t *testing.T) {
		g, changed := gateFor(t, "method:sampling/createMessage")
		p := startHTTPGate(t, nil, "", 0, g)
		initSampling(t, p)
		done := postAsync(t, p.host, sampleCall)
		h := heldOne(t, g, changed)
		if !h.Answerable {
			t.Fatalf("the server's request cannot be answered: %+v", h)
		}
		if err := g.Answer(h.ID, json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"said by the proxy"},"model":"none"}`), 0, ""); err != nil {
			t.Fatal(err)
		}
		a := <-done
		if len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte("said by the proxy")) {
			t.Errorf("the host got %q %v", a.Frames, a.Err)
		}
	})
}

// strayUpstream answers each request with an SSE stream holding the
// answers to every id up to its own not yet answered: a server that
// answers requests it never got.
func strayUpstream() http.Handler {
	var mu sync.Mutex
	answered := map[int]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID int `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		if m.ID == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		mu.Lock()
		defer mu.Unlock()
		for id := 1; id <= m.ID; id++ {
			if !answered[id] {
				answered[id] = true
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"from\":\"server\"}}\n\n", id)
			}
		}
	})
}

// Over HTTP, a server that answers a request the proxy answered in its
// place: the host gets one answer for the id, the proxy's; the server's
// is withheld and said. An answer to a dropped request goes on, said.
func TestHTTPStrayAnswers(t *testing.T) {
	p := startHTTP(t, strayUpstream(), "faults:\n  - match: id:1 dir:out\n    error: {code: -32001, message: busy}\n  - match: id:2 dir:out\n    drop: true\n", 1)
	if a := p.host.Post(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte("busy")) {
		t.Fatalf("id 1: %q", a.Frames)
	}
	if a := p.host.Post(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); a.Status != http.StatusAccepted {
		t.Fatalf("id 2: %d %q", a.Status, a.Frames)
	}
	a := p.host.Post(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	var ids []string
	for _, f := range a.Frames {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(f, &m)
		ids = append(ids, string(m.ID))
	}
	if strings.Join(ids, ",") != "2,3" {
		t.Errorf("the host got the answers of ids %v, want 2 (the dropped request's) and 3", ids)
	}
	checkStrays(t, p.changes(t))
}

// checkStrays wants two strays said: the answer to id 1 (answered in the
// peer's place) withheld, then the answer to id 2 (dropped) forwarded.
func checkStrays(t *testing.T, changes []intercept.Change) {
	t.Helper()
	var notes []string
	for _, c := range changes {
		if c.Action == "stray" {
			notes = append(notes, c.Note)
		}
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "id 1") || !strings.Contains(notes[0], "withheld") ||
		!strings.Contains(notes[1], "id 2") || !strings.Contains(notes[1], "forwarded") {
		t.Errorf("stray notes %q", notes)
	}
}

// A request the proxy answered in the server's place, then one of the
// same id sent on (the next session's, or a retry): the server's answer
// to that one is no stray, and reaches the host.
func TestStrayEndsWithTheNextRequestOfItsID(t *testing.T) {
	p := startHTTP(t, jsonUpstream, "faults:\n  - match: id:1 dir:out\n    error: {code: -32001, message: busy}\n    count: 1\n", 1)
	if a := p.host.Post(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte("busy")) {
		t.Fatalf("the first: %q", a.Frames)
	}
	if a := p.host.Post(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte(`"result"`)) {
		t.Errorf("the second, sent on: %d %q", a.Status, a.Frames)
	}
	s := startStdio(t, "stray", "faults:\n  - match: id:1 dir:out\n    error: {code: -32001, message: busy}\n    count: 1\n", 1)
	s.host.Send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	s.host.Send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	for _, want := range []string{"busy", `"from":"server"`} {
		if line, _ := s.host.Recv(t); !strings.Contains(string(line), want) {
			t.Errorf("got %s, want %s", line, want)
		}
	}
}

// A host that answers a server's request the proxy answered in its
// place: the server never gets a second answer.
func TestHostsStrayAnswerIsWithheld(t *testing.T) {
	p := startHTTP(t, nil, "faults:\n  - match: method:sampling/createMessage\n    error: {code: -32001, message: no model here}\n", 1)
	initSampling(t, p)
	p.host.Post(t, sampleCall)
	var asked struct {
		Original struct {
			ID json.RawMessage `json:"id"`
		} `json:"original"`
	}
	ch := p.changes(t)
	if len(ch) != 1 {
		t.Fatalf("changes %+v", ch)
	}
	b, _ := json.Marshal(ch[0])
	json.Unmarshal(b, &asked)
	a := p.host.Post(t, `{"jsonrpc":"2.0","id":`+string(asked.Original.ID)+`,"result":{"role":"assistant","content":{"type":"text","text":"late"},"model":"m"}}`)
	if a.Status != http.StatusAccepted || count(p.upstreamSaw(), "late") != 0 {
		t.Errorf("the host's stray answer: %d, the upstream saw %q", a.Status, p.upstreamSaw())
	}
}

// The copies of a duplicated request carry none of the headers the
// host's Connection header names.
func TestCopiesLeaveHopHeaders(t *testing.T) {
	got := make(chan http.Header, 4)
	p := startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		jsonUpstream.ServeHTTP(w, r)
	}), "faults:\n  - match: dir:out\n    duplicate: 2\n", 1)
	req, _ := http.NewRequest(http.MethodPost, p.host.URL, strings.NewReader(ping))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connection", "keep-alive, X-Hop")
	req.Header.Set("X-Hop", "not for the server")
	req.Header.Set("Authorization", "Bearer for-the-server")
	resp, err := transport.NewHTTPClient(nil, transport.EgressPolicy{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for i := range 2 {
		select {
		case h := <-got:
			if h.Get("X-Hop") != "" || h.Get("Authorization") != "Bearer for-the-server" {
				t.Errorf("request %d: X-Hop %q, Authorization %q", i, h.Get("X-Hop"), h.Get("Authorization"))
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d requests reached the upstream, want 2", i)
		}
	}
}

// A request held back by a reorder goes once a later one failed at the
// upstream, as once a later one was answered.
func TestReorderCountsAFailedRequest(t *testing.T) {
	old := reorderWait.Swap(int64(time.Hour))
	t.Cleanup(func() { reorderWait.Store(old) })
	p := startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		if strings.Contains(b.String(), `"id":3`) {
			panic(http.ErrAbortHandler) // the upstream fails this one
		}
		r.Body = io.NopCloser(&b)
		jsonUpstream.ServeHTTP(w, r)
	}), "faults:\n  - match: dir:out id:2\n    reorder: 1\n", 1)
	first := postAsync(t, p.host, ping)
	p.waitChange(t)
	if a := p.host.Post(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); a.Status != http.StatusBadGateway {
		t.Errorf("the failed request: %d", a.Status)
	}
	if a := <-first; len(a.Frames) != 1 {
		t.Errorf("the held request: %d %q %v", a.Status, a.Frames, a.Err)
	}
}

// waitChange waits for the proxy's first change.
func (p *httpProxied) waitChange(t *testing.T) {
	t.Helper()
	p.tap.waitFor(t, "a change", func(evs []transport.Event) bool {
		for _, e := range evs {
			if e.Kind == transport.KindIntercept {
				return true
			}
		}
		return false
	})
}

// Over HTTP too, a seed repeats a run byte for byte: the same host
// requests get the same answers under the same draws.
func TestHTTPSeedRepeats(t *testing.T) {
	faults := "faults:\n  - match: dir:in method:ping\n    probability: 0.5\n    corrupt: id\n  - match: dir:out method:ping\n    probability: 0.3\n    error: {code: -32001, message: busy}\n"
	run := func(seed uint64) string {
		p := startHTTP(t, nil, faults, seed)
		p.host.Initialize(t)
		var out bytes.Buffer
		for id := range 40 {
			a := p.host.Post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id+2))
			fmt.Fprintf(&out, "%d %q\n", a.Status, a.Frames)
		}
		return out.String()
	}
	a, b, c := run(7), run(7), run(8)
	if a != b {
		t.Errorf("seed 7 twice gave two runs:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 gave the same run")
	}
	if !strings.Contains(a, "1000") || !strings.Contains(a, "busy") {
		t.Errorf("a rule never fired: %s", a)
	}
}

// Over Streamable HTTP with no session id (a stateless server), a host's
// call under way, then another request of the same id answered in the
// server's place: the call's answer, in its own POST's response, is its
// own and reaches it.
func TestOwnAnswerIsNoStray(t *testing.T) {
	got, release := make(chan struct{}, 1), make(chan struct{})
	p := startHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		if strings.Contains(b.String(), `"slow"`) {
			got <- struct{}{}
			<-release
		}
		r.Body = io.NopCloser(&b)
		jsonUpstream.ServeHTTP(w, r)
	}), "faults:\n  - match: dir:out method:ping\n    error: {code: -32001, message: busy}\n", 1)
	call := postAsync(t, p.host, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow"}}`)
	<-got
	other := &mcptest.HTTPHost{URL: p.host.URL}
	if a := other.Post(t, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte("busy")) {
		t.Fatalf("the ping: %q", a.Frames)
	}
	close(release)
	if a := <-call; len(a.Frames) != 1 || !bytes.Contains(a.Frames[0], []byte(`"result"`)) {
		t.Errorf("the call got %d %q, want its answer", a.Status, a.Frames)
	}
}
