package mcptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// RepoRoot returns the directory holding go.mod, found by walking up from
// the working directory.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("mcptest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Schema is the JSON Schema of one protocol revision.
type Schema struct {
	Revision string
	url      string
	defsKey  string // "definitions" (draft-07) or "$defs" (2020-12)
	compiler *jsonschema.Compiler
	requests map[string]string // method -> definition name
	notifs   map[string]string

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

var (
	schemasMu sync.Mutex
	schemas   = map[string]*Schema{}
)

// LoadSchema loads the schema of revision rev from internal/specschema.
func LoadSchema(rev string) (*Schema, error) {
	schemasMu.Lock()
	defer schemasMu.Unlock()
	if s := schemas[rev]; s != nil {
		return s, nil
	}
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "internal", "specschema", rev+".json"))
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var raw struct {
		Definitions map[string]json.RawMessage `json:"definitions"`
		Defs        map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	s := &Schema{Revision: rev, url: "mcp-schema:///" + rev + ".json", compiled: map[string]*jsonschema.Schema{}}
	defs := raw.Defs
	s.defsKey = "$defs"
	if defs == nil {
		defs, s.defsKey = raw.Definitions, "definitions"
	}
	s.compiler = jsonschema.NewCompiler()
	if err := s.compiler.AddResource(s.url, doc); err != nil {
		return nil, err
	}
	s.requests = methodsOf(defs, "ClientRequest")
	s.notifs = methodsOf(defs, "ClientNotification")
	schemas[rev] = s
	return s, nil
}

// methodsOf maps each method of the anyOf union named union to the
// definition that describes it.
func methodsOf(defs map[string]json.RawMessage, union string) map[string]string {
	var u struct {
		AnyOf []struct {
			Ref string `json:"$ref"`
		} `json:"anyOf"`
	}
	json.Unmarshal(defs[union], &u)
	out := map[string]string{}
	add := func(name string) {
		var d struct {
			Properties struct {
				Method struct {
					Const string `json:"const"`
				} `json:"method"`
			} `json:"properties"`
		}
		json.Unmarshal(defs[name], &d)
		if m := d.Properties.Method.Const; m != "" {
			out[m] = name
		}
	}
	if len(u.AnyOf) == 0 {
		// A union of one is the definition itself.
		add(union)
		return out
	}
	for _, a := range u.AnyOf {
		add(a.Ref[strings.LastIndex(a.Ref, "/")+1:])
	}
	return out
}

func (s *Schema) def(name string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.compiled[name]; c != nil {
		return c, nil
	}
	c, err := s.compiler.Compile(s.url + "#/" + s.defsKey + "/" + name)
	if err != nil {
		return nil, err
	}
	s.compiled[name] = c
	return c, nil
}

// Validate checks data against the named definition.
func (s *Schema) Validate(def string, data []byte) error {
	sch, err := s.def(def)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// resultDefs names the result definition of each server->client request.
var resultDefs = map[string]string{
	"sampling/createMessage": "CreateMessageResult",
	"elicitation/create":     "ElicitResult",
	"roots/list":             "ListRootsResult",
	"ping":                   "Result",
}

// FrameChecker is a tap that validates every frame mcpi sends against the
// schema of the revision in force. It learns the method of each server
// request it sees so that it can check the answer's result.
type FrameChecker struct {
	mu       sync.Mutex
	schema   *Schema
	inbound  map[string]string // server request id key -> method
	errs     []string
	checked  int
	rev      func() string
	revCache string
	allowed  map[string]bool
}

// Allow exempts requests of a method unknown to the schema, which a test
// sends on purpose.
func (fc *FrameChecker) Allow(method string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.allowed == nil {
		fc.allowed = map[string]bool{}
	}
	fc.allowed[method] = true
}

// NewFrameChecker returns a checker; rev tells it the revision in force
// (before initialize, the offered revision).
func NewFrameChecker(rev func() string) *FrameChecker {
	return &FrameChecker{rev: rev, inbound: map[string]string{}}
}

// Observe implements transport.Tap.
func (fc *FrameChecker) Observe(e transport.Event) {
	if e.Kind != transport.KindFrame {
		return
	}
	if e.Dir == transport.Incoming {
		fc.learn(e.Data)
		return
	}
	msgs, _, err := mcp.DecodeFrame(e.Data)
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if err != nil {
		if e.Dir == transport.Outgoing {
			fc.errs = append(fc.errs, fmt.Sprintf("sent a frame that is not JSON-RPC: %v: %s", err, e.Data))
		}
		return
	}
	rev := fc.rev()
	if fc.schema == nil || fc.revCache != rev {
		s, err := LoadSchema(rev)
		if err != nil {
			fc.errs = append(fc.errs, fmt.Sprintf("loading schema %s: %v", rev, err))
			return
		}
		fc.schema, fc.revCache = s, rev
	}
	for _, m := range msgs {
		if fc.allowed[m.Method] {
			continue
		}
		raw, _ := json.Marshal(m)
		// A modern request names its revision in _meta: that one applies,
		// whatever the session has settled (the era probe comes first).
		if mrev := metaRevision(m.Params); mrev != "" && mrev != fc.revCache {
			s, err := LoadSchema(mrev)
			if err != nil {
				fc.errs = append(fc.errs, fmt.Sprintf("loading schema %s: %v", mrev, err))
				continue
			}
			fc.schema, fc.revCache = s, mrev
		} else if mrev == "" && fc.revCache != rev {
			s, err := LoadSchema(rev)
			if err != nil {
				fc.errs = append(fc.errs, fmt.Sprintf("loading schema %s: %v", rev, err))
				continue
			}
			fc.schema, fc.revCache = s, rev
		}
		fc.checked++
		if err := fc.check(m, raw); err != nil {
			fc.errs = append(fc.errs, fmt.Sprintf("frame %s does not validate against %s: %v", raw, fc.revCache, err))
		}
	}
}

func (fc *FrameChecker) check(m *mcp.Message, raw []byte) error {
	s := fc.schema
	switch {
	case m.IsRequest():
		def, ok := s.requests[m.Method]
		if !ok {
			return fmt.Errorf("method %q is not a client request in this revision", m.Method)
		}
		if bytes.Contains(m.Params, []byte(`"inputResponses"`)) {
			raw = integerInputResponses(raw)
		}
		return s.Validate(def, raw)
	case m.IsNotification():
		def, ok := s.notifs[m.Method]
		if !ok {
			return fmt.Errorf("method %q is not a client notification in this revision", m.Method)
		}
		return s.Validate(def, raw)
	case m.Error != nil:
		def := "JSONRPCError"
		if s.Revision >= mcp.Rev20251125 {
			def = "JSONRPCErrorResponse"
		}
		return s.Validate(def, raw)
	default:
		def := "JSONRPCResponse"
		if s.Revision >= mcp.Rev20251125 {
			def = "JSONRPCResultResponse"
		}
		if err := s.Validate(def, raw); err != nil {
			return err
		}
		k, _ := mcp.IDKey(m.ID)
		method := fc.inbound[k]
		result := m.Result
		if method == "elicitation/create" {
			result = integerNumbers(result)
		}
		if rd, ok := resultDefs[method]; ok {
			return s.Validate(rd, result)
		}
		return fmt.Errorf("a response to unknown server request %s", m.ID)
	}
}

// metaRevision returns the protocol revision in params._meta, if any.
func metaRevision(params json.RawMessage) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	var rev string
	json.Unmarshal(p.Meta[mcp.MetaProtocolVersion], &rev)
	return rev
}

// learn notes the method of each server request in an incoming frame,
// without decoding the rest (results can be tens of megabytes).
func (fc *FrameChecker) learn(data []byte) {
	type head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	var heads []head
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		json.Unmarshal(data, &heads)
	} else {
		var h head
		if !bytes.Contains(data, []byte(`"method"`)) || json.Unmarshal(data, &h) != nil {
			return
		}
		heads = append(heads, h)
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for _, h := range heads {
		if k, ok := mcp.IDKey(h.ID); ok && h.Method != "" {
			fc.inbound[k] = h.Method
		}
	}
}

// Result returns how many messages were checked and what failed.
func (fc *FrameChecker) Result() (checked int, errs []string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.checked, append([]string(nil), fc.errs...)
}

// integerNumbers rounds the numbers of an ElicitResult's content down. The
// published JSON schemas type form values as string, integer or boolean,
// while the spec's schema.ts (and every SDK) allows any number, as a number
// field of requestedSchema needs; the check follows schema.ts here.
func integerNumbers(result json.RawMessage) json.RawMessage {
	var r map[string]any
	if json.Unmarshal(result, &r) != nil {
		return result
	}
	content, ok := r["content"].(map[string]any)
	if !ok {
		return result
	}
	for k, v := range content {
		if f, ok := v.(float64); ok {
			content[k] = math.Floor(f)
		}
	}
	b, _ := json.Marshal(r)
	return b
}

// integerInputResponses applies integerNumbers to the elicitation answers
// inside a modern request's inputResponses.
func integerInputResponses(raw []byte) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(raw, &msg) != nil {
		return raw
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil {
		return raw
	}
	var responses map[string]json.RawMessage
	if json.Unmarshal(params["inputResponses"], &responses) != nil {
		return raw
	}
	for k, v := range responses {
		responses[k] = integerNumbers(v)
	}
	params["inputResponses"], _ = json.Marshal(responses)
	msg["params"], _ = json.Marshal(params)
	out, _ := json.Marshal(msg)
	return out
}
