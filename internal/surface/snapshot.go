package surface

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Format is the format version of a snapshot document. A change an older
// reader would misread gets a new number; readers refuse numbers they do
// not know.
const Format = "mcpi.surface/1"

// formatPrefix is what every version of the format starts with.
const formatPrefix = "mcpi.surface/"

// Entry is one tool, resource, template or prompt, as the server listed
// it, every field kept.
type Entry = map[string]any

// Surface is what a server shows a client in one era. A nil list is one
// the source did not hold (a trace that never listed it): unknown, never
// empty. A nil ServerInfo, Capabilities or ClientCapabilities is unknown
// too.
type Surface struct {
	Era                string         `json:"era,omitempty"`
	Revision           string         `json:"revision,omitempty"`
	ServerInfo         map[string]any `json:"serverInfo"`
	Capabilities       map[string]any `json:"capabilities"`
	Instructions       string         `json:"instructions,omitempty"`
	ClientCapabilities map[string]any `json:"clientCapabilities"`
	Tools              []Entry        `json:"tools"`
	Resources          []Entry        `json:"resources"`
	Templates          []Entry        `json:"resourceTemplates"`
	Prompts            []Entry        `json:"prompts"`
}

// Snapshot is a server's surface: the era mcpi spoke and, for a server
// that speaks both, the other.
type Snapshot struct {
	Format string `json:"format"`
	// Eras are the eras the server was found to speak; nil when that was
	// not asked (a trace, a snapshot without a second connection).
	Eras []string `json:"eras,omitempty"`
	// Ignored are the --ignore pointers left out of every surface; a diff
	// leaves them out of the other side too.
	Ignored []string `json:"ignored,omitempty"`
	Surface
	OtherEra *Surface `json:"otherEra,omitempty"`
}

// OtherEraTimeout bounds the handshake of the era the client did not
// speak (at most the request timeout).
const OtherEraTimeout = 5 * time.Second

// Options adjust Take.
type Options struct {
	// Dial opens another connection to the server, to list the era the
	// client did not speak; nil lists one era only.
	Dial func(ctx context.Context) (transport.Conn, error)
	// Timeout bounds each request of the second connection (0: the
	// session's default).
	Timeout time.Duration
	// ClientInfo is who mcpi says it is on the second connection.
	ClientInfo mcp.Implementation
	// Ignore are JSON pointers, relative to a surface, left out of it
	// ("*" matches every member or element).
	Ignore []string
	// Changes counts the list_changed notifications the session has had
	// (nil: none are heard): a surface listed while one came is listed
	// again, at most ListAttempts times.
	Changes func() int64
}

// ListAttempts bounds how often a surface is listed again because the
// server said a list changed while it was being listed.
const ListAttempts = 3

// ErrChanging says the server's lists kept changing while they were
// listed: a snapshot needs a server at rest.
var ErrChanging = errors.New("the server's lists changed while they were listed")

// Take lists the surface of the server behind c, every page of every
// list, under the client's page bound; with opts.Dial, the other era's
// too when the server speaks it.
func Take(ctx context.Context, c *session.Client, opts Options) (*Snapshot, error) {
	if err := checkPointers(opts.Ignore); err != nil {
		return nil, err
	}
	s, err := steadySurface(ctx, c, opts.Changes)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Format: Format, Surface: *s}
	if opts.Dial != nil {
		snap.Eras = []string{c.Era()}
		other, err := otherEra(ctx, c, opts)
		if err != nil {
			return nil, err
		}
		if other != nil {
			snap.OtherEra = other
			snap.Eras = append(snap.Eras, other.Era)
		}
	}
	return snap, snap.Ignore(opts.Ignore)
}

// otherEra lists the surface of the era c did not speak, on a connection
// of its own; nil when the server does not speak it.
func otherEra(ctx context.Context, c *session.Client, opts Options) (*Surface, error) {
	other := session.EraModern
	if c.Era() == session.EraModern {
		other = session.EraLegacy
	}
	conn, err := opts.Dial(ctx)
	if err != nil {
		return nil, nil
	}
	// A server of one era may never answer the other's handshake: a
	// snapshot in CI must not wait the whole --timeout for it each time.
	clock := bounds.Clock{Name: "other era", D: OtherEraTimeout}
	if opts.Timeout > 0 && opts.Timeout < clock.D {
		clock.D = opts.Timeout
	}
	hctx, cancel := clock.Context(ctx)
	defer cancel()
	oc, err := session.Connect(hctx, conn, session.Options{Era: other, Timeout: opts.Timeout, ProbeTimeout: clock.D,
		ClientInfo: opts.ClientInfo, Handler: session.DeclineHandler{}})
	if err != nil {
		conn.Close()
		return nil, nil // the server speaks one era
	}
	defer oc.Close()
	if oc.Era() != other {
		return nil, nil
	}
	s, err := surfaceOf(ctx, oc)
	if err != nil {
		return nil, fmt.Errorf("the %s era: %w", other, err)
	}
	return s, nil
}

// surfaceOf lists one era's surface.
func surfaceOf(ctx context.Context, c *session.Client) (*Surface, error) {
	s := &Surface{Era: c.Era(), Revision: c.ProtocolVersion()}
	init := c.InitializeResult()
	if init == nil {
		return nil, errors.New("the session has no handshake")
	}
	s.Instructions = init.Instructions
	if err := roundTrip(init.ServerInfo, &s.ServerInfo); err != nil {
		return nil, err
	}
	var raw struct {
		Capabilities map[string]any `json:"capabilities"`
	}
	if err := decode(c.InitializeResultRaw(), &raw); err != nil || raw.Capabilities == nil {
		raw.Capabilities = map[string]any{}
	}
	s.Capabilities = raw.Capabilities
	if err := roundTrip(c.DeclaredCapabilities(), &s.ClientCapabilities); err != nil {
		return nil, err
	}
	caps := c.ServerCapabilities()
	s.Tools, s.Resources, s.Templates, s.Prompts = []Entry{}, []Entry{}, []Entry{}, []Entry{}
	if caps.Tools != nil {
		ts, err := c.AllTools(ctx)
		if err != nil {
			return nil, err
		}
		if err := roundTrip(ts, &s.Tools); err != nil {
			return nil, err
		}
	}
	if caps.Resources != nil {
		rs, err := c.AllResources(ctx)
		if err != nil {
			return nil, err
		}
		if err := roundTrip(rs, &s.Resources); err != nil {
			return nil, err
		}
		ts, err := c.AllResourceTemplates(ctx)
		var re *session.RPCError
		switch {
		case errors.As(err, &re) && re.RPCError != nil && re.Code == mcp.CodeMethodNotFound:
			s.Templates = nil // a server with no templates/list: unknown, not empty
		case err != nil:
			return nil, err
		default:
			if err := roundTrip(ts, &s.Templates); err != nil {
				return nil, err
			}
		}
	}
	if caps.Prompts != nil {
		ps, err := c.AllPrompts(ctx)
		if err != nil {
			return nil, err
		}
		if err := roundTrip(ps, &s.Prompts); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// roundTrip turns v into the generic JSON in out.
func roundTrip(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return decode(b, out)
}

// decode decodes JSON keeping numbers as they were written.
func decode(b []byte, out any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(out); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// Marshal returns the snapshot as its document: indented JSON, every
// object's keys sorted, numbers as the server wrote them, a final line
// ending. Two snapshots of an unchanged server are the same bytes.
func Marshal(s *Snapshot) ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var v any
	if err := decode(b, &v); err != nil {
		return nil, err
	}
	return canonical(v, "  ")
}

// canonical encodes generic JSON (maps sort their keys) without HTML
// escapes.
func canonical(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// FormatError is a document that says it is a snapshot of a format this
// mcpi does not read.
type FormatError struct{ Format string }

func (e *FormatError) Error() string {
	return fmt.Sprintf("snapshot format %q is not one this mcpi reads (it reads %s): a newer mcpi wrote it, or it was edited", clip(e.Format), Format)
}

// ErrNotSnapshot is matched by errors.Is when a document is neither a
// snapshot nor a trace.
var ErrNotSnapshot = errors.New("not an mcpi snapshot or trace")

// Decode reads a snapshot document.
func Decode(b []byte) (*Snapshot, error) {
	var head struct {
		Format *string `json:"format"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotSnapshot, err)
	}
	switch {
	case head.Format == nil:
		return nil, fmt.Errorf("%w: it has no \"format\"", ErrNotSnapshot)
	case *head.Format == Format:
	case strings.HasPrefix(*head.Format, formatPrefix):
		return nil, &FormatError{Format: *head.Format}
	default:
		return nil, fmt.Errorf("%w: its format is %q", ErrNotSnapshot, clip(*head.Format))
	}
	var s Snapshot
	if err := decode(b, &s); err != nil {
		return nil, fmt.Errorf("a %s snapshot whose fields have the wrong shape: %v", Format, err)
	}
	return &s, nil
}

// clip shortens what a document says of itself for a message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Ignore leaves the JSON pointers ps out of every surface of s, and
// remembers them.
func (s *Snapshot) Ignore(ps []string) error {
	if len(ps) == 0 {
		return nil
	}
	if err := checkPointers(ps); err != nil {
		return err
	}
	for _, sf := range []*Surface{&s.Surface, s.OtherEra} {
		if sf == nil {
			continue
		}
		if err := sf.ignore(ps); err != nil {
			return err
		}
	}
	for _, p := range ps {
		if !contains(s.Ignored, p) {
			s.Ignored = append(s.Ignored, p)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (sf *Surface) ignore(ps []string) error {
	var v any
	if err := roundTrip(sf, &v); err != nil {
		return err
	}
	for _, p := range ps {
		toks, _ := schema.SplitPointer(p)
		v = remove(v, toks)
	}
	var out Surface
	if err := roundTrip(v, &out); err != nil {
		return err
	}
	*sf = out
	return nil
}

// checkPointers checks --ignore's pointers.
func checkPointers(ps []string) error {
	for _, p := range ps {
		toks, err := schema.SplitPointer(p)
		if err != nil {
			return err
		}
		if len(toks) == 0 {
			return fmt.Errorf("--ignore %q would leave out the whole surface", p)
		}
	}
	return nil
}

// remove returns v without what toks point at; "*" matches every member
// of an object or element of an array.
func remove(v any, toks []string) any {
	if len(toks) == 0 {
		return v
	}
	t, rest := toks[0], toks[1:]
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if t != "*" && k != t {
				continue
			}
			if len(rest) == 0 {
				delete(x, k)
			} else {
				x[k] = remove(child, rest)
			}
		}
	case []any:
		if t == "*" {
			if len(rest) == 0 {
				return []any{}
			}
			for i := range x {
				x[i] = remove(x[i], rest)
			}
			return x
		}
		i, err := strconv.Atoi(t)
		if err != nil || i < 0 || i >= len(x) {
			return x
		}
		if len(rest) == 0 {
			return append(x[:i:i], x[i+1:]...)
		}
		x[i] = remove(x[i], rest)
	}
	return v
}

// steadySurface lists c's surface until no list_changed came while it
// was listed, at most ListAttempts times.
func steadySurface(ctx context.Context, c *session.Client, changes func() int64) (*Surface, error) {
	if changes == nil {
		return surfaceOf(ctx, c)
	}
	for range ListAttempts {
		before := changes()
		s, err := surfaceOf(ctx, c)
		if err != nil || changes() == before {
			return s, err
		}
	}
	return nil, fmt.Errorf("%w, %d times: a snapshot needs a server at rest", ErrChanging, ListAttempts)
}
