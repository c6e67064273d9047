package replay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// Server answers requests with the responses of a trace. A request matches
// a recorded one when the method and the params (without _meta) are the
// same as canonical JSON; several recorded requests with the same key are
// used in their recorded order (the last one again once they run out).
type Server struct {
	t *Trace

	mu     sync.Mutex
	used   map[string]int // key -> how many of its exchanges were used
	byKey  map[string][]*Exchange
	nextID int
}

// NewServer returns a mock server for t.
func NewServer(t *Trace) *Server {
	s := &Server{t: t, used: map[string]int{}, byKey: map[string][]*Exchange{}}
	for _, ex := range t.Exchanges {
		if ex.Response != nil {
			s.byKey[ex.Key] = append(s.byKey[ex.Key], ex)
		}
	}
	return s
}

// Answer returns the frames to send for one incoming message: the recorded
// server messages around the matched request, then its response with the
// incoming id. Notifications and responses from the client get nothing.
func (s *Server) Answer(m *mcp.Message) [][]byte {
	if !m.IsRequest() {
		return nil
	}
	key := requestKey(m.Method, m.Params)
	s.mu.Lock()
	cands := s.byKey[key]
	var ex *Exchange
	if len(cands) > 0 {
		i := min(s.used[key], len(cands)-1)
		s.used[key]++
		ex = cands[i]
	}
	s.mu.Unlock()
	if ex == nil {
		switch m.Method {
		case "ping", "logging/setLevel":
			// Every legacy client may send these; a trace seldom has them.
			frame, _ := mcp.NewResult(m.ID, map[string]any{})
			return [][]byte{frame}
		}
		frame, _ := mcp.NewErrorResponse(m.ID, s.unknown(m))
		return [][]byte{frame}
	}
	token := progressTokenRaw(m.Params)
	var out [][]byte
	for _, raw := range ex.Before {
		out = append(out, s.serverMessage(raw, token))
	}
	resp := ex.Response
	if m.Method == "initialize" {
		resp = negotiate(resp, m.Params)
	}
	out = append(out, withID(resp, m.ID))
	for _, raw := range ex.After {
		out = append(out, s.serverMessage(raw, token))
	}
	return out
}

// serverMessage prepares a recorded server message: a server request gets
// an id of the mock's own, progress gets the live request's token.
func (s *Server) serverMessage(raw json.RawMessage, token json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if _, isReq := m["id"]; isReq {
		s.mu.Lock()
		s.nextID++
		m["id"], _ = json.Marshal(fmt.Sprintf("replay-%d", s.nextID))
		s.mu.Unlock()
	}
	var method string
	json.Unmarshal(m["method"], &method)
	if method == "notifications/progress" && len(token) > 0 {
		var p map[string]json.RawMessage
		if json.Unmarshal(m["params"], &p) == nil {
			p["progressToken"] = token
			m["params"], _ = json.Marshal(p)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}

func progressTokenRaw(params json.RawMessage) json.RawMessage {
	var p struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(params, &p)
	return p.Meta.ProgressToken
}

// negotiate answers an initialize with the revision the client asks for
// when the recorded server would have taken it: a known revision no newer
// than the one it answered with (servers keep speaking older revisions).
// Otherwise the recorded answer stands.
func negotiate(resp json.RawMessage, params json.RawMessage) json.RawMessage {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	var m map[string]json.RawMessage
	var r map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(resp, &m) != nil || json.Unmarshal(m["result"], &r) != nil {
		return resp
	}
	var recorded string
	json.Unmarshal(r["protocolVersion"], &recorded)
	if p.ProtocolVersion == "" || p.ProtocolVersion == recorded || !mcp.IsLegacy(p.ProtocolVersion) || !mcp.IsLegacy(recorded) || p.ProtocolVersion > recorded {
		return resp
	}
	r["protocolVersion"], _ = json.Marshal(p.ProtocolVersion)
	m["result"], _ = json.Marshal(r)
	b, err := json.Marshal(m)
	if err != nil {
		return resp
	}
	return b
}

// withID returns a recorded response with its id replaced, leaving the
// result's bytes as recorded.
func withID(resp json.RawMessage, id json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(resp, &m) != nil {
		return resp
	}
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		return resp
	}
	return b
}

// unknown builds the error for a request the trace does not have, naming
// the closest recorded request.
func (s *Server) unknown(m *mcp.Message) *mcp.RPCError {
	key := requestKey(m.Method, m.Params)
	best, bestScore := "", -1
	sameMethod := false
	for k := range s.byKey {
		method, _, _ := strings.Cut(k, " ")
		score := similarity(key, k)
		if method == m.Method {
			score += 1 << 20
			sameMethod = true
		}
		if score > bestScore || (score == bestScore && k < best) {
			best, bestScore = k, score
		}
	}
	code := mcp.CodeMethodNotFound
	if sameMethod {
		code = mcp.CodeInvalidParams
	}
	msg := fmt.Sprintf("the trace has no recorded request %s", shortKey(key))
	if best != "" {
		msg += "; closest recorded: " + shortKey(best)
	}
	data, _ := json.Marshal(map[string]string{"closest": best})
	return &mcp.RPCError{Code: code, Message: msg, Data: data}
}

func shortKey(k string) string {
	if len(k) > 300 {
		return k[:300] + "…"
	}
	return k
}

// similarity scores two keys by their longest common subsequence of
// characters, on the first 1,000 of each: enough to rank near misses.
func similarity(a, b string) int {
	a, b = a[:min(len(a), 1000)], b[:min(len(b), 1000)]
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] > cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// ServeStdio answers newline-delimited JSON-RPC on in with frames on out,
// until in ends or ctx is done.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 1<<20)
	w := bufio.NewWriter(out)
	lines := make(chan []byte)
	errc := make(chan error, 1)
	go func() {
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				lines <- line
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				errc <- err
				close(lines)
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case line, ok := <-lines:
			if !ok {
				return <-errc
			}
			msgs, _, err := mcp.DecodeFrame(line)
			if err != nil {
				frame, _ := mcp.NewErrorResponse(nil, &mcp.RPCError{Code: mcp.CodeParseError, Message: "not JSON-RPC: " + err.Error()})
				w.Write(frame)
				w.WriteByte('\n')
				w.Flush()
				continue
			}
			for _, m := range msgs {
				for _, f := range s.Answer(m) {
					w.Write(f)
					w.WriteByte('\n')
				}
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// HTTPHandler serves the trace over Streamable HTTP: each POSTed request is
// answered with JSON, or with an SSE stream when recorded server messages
// come before the response. initialize mints a session id; GET is refused
// with 405 (no standalone stream); DELETE is accepted.
func (s *Server) HTTPHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
		case http.MethodDelete:
			w.WriteHeader(http.StatusOK)
			return
		default:
			w.Header().Set("Allow", "POST, DELETE")
			http.Error(w, "this replay server has no GET stream", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<30))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		msgs, _, err := mcp.DecodeFrame(body)
		if err != nil || len(msgs) != 1 {
			http.Error(w, "want one JSON-RPC message", http.StatusBadRequest)
			return
		}
		m := msgs[0]
		if !m.IsRequest() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		frames := s.Answer(m)
		if m.Method == "initialize" {
			var b [16]byte
			rand.Read(b[:])
			w.Header().Set("Mcp-Session-Id", hex.EncodeToString(b[:]))
		}
		if len(frames) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Write(frames[0])
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		flusher, _ := w.(http.Flusher)
		for _, f := range frames {
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", f)
			if flusher != nil {
				flusher.Flush()
			}
		}
	})
}
