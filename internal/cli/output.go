package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/pretty"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/save"
)

// writeRawJSON prints JSON as the server sent it, with every character a
// terminal may act on or hide written as a \u escape (escapeUnsafe: every
// value reads back the same). On a terminal, for a person: pretty, and
// coloured when colour is on, through the sink. Otherwise, for a program:
// one line, through Data.
func writeRawJSON(ios *IOStreams, raw []byte) error {
	if ios.jsonFailed.Load() {
		// The error object takes the document's place (withJSONError).
		return nil
	}
	return writeJSONDocument(ios, raw)
}

// writeJSONDocument is writeRawJSON for any document, the error object
// included.
func writeJSONDocument(ios *IOStreams, raw []byte) error {
	ios.jsonWritten.Store(true)
	raw = escapeUnsafe(raw)
	if ios.StdoutTTY {
		out := pretty.Pretty(raw)
		if ios.Color {
			return ios.Out.WriteStyled(string(pretty.Color(out, nil)))
		}
		_, err := ios.Out.Write(out)
		return err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		buf.Reset()
		buf.Write(raw)
	}
	buf.WriteByte('\n')
	_, err := ios.Data().Write(buf.Bytes())
	return err
}

// escapeUnsafe rewrites the characters that JSON allows raw inside strings
// but a terminal may act on or hide (safetext.Unsafe: C1 controls, bidi
// and zero-width characters, tag characters, separators, DEL) as \u
// escapes, and invalid UTF-8 as \ufffd. The JSON means the same, save for
// the invalid bytes; only its spelling changes.
func escapeUnsafe(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x7f {
			if out != nil {
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError || safetext.Unsafe(r) {
			if out == nil {
				out = append(make([]byte, 0, len(b)+16), b[:i]...)
			}
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		} else if out != nil {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return b
	}
	return out
}

// writeJSONLine prints v as one line of JSON Lines (mcpi tail --json),
// escaped like writeRawJSON; on a terminal through the sink.
func writeJSONLine(ios *IOStreams, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(escapeUnsafe(b), '\n')
	if ios.StdoutTTY {
		_, err = ios.Out.Write(b)
	} else {
		_, err = ios.Data().Write(b)
	}
	return err
}

// writeDocument prints a document whose bytes are part of what it says (a
// snapshot, byte-identical when nothing changed): as they are on a pipe,
// through the sink on a terminal; unsafe characters escaped either way.
func writeDocument(ios *IOStreams, b []byte) error {
	b = escapeUnsafe(b)
	if ios.StdoutTTY {
		_, err := ios.Out.Write(b)
		return err
	}
	_, err := ios.Data().Write(b)
	return err
}

// writeJSON marshals v and prints it like writeRawJSON.
func writeJSON(ios *IOStreams, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeRawJSON(ios, b)
}

// writeJSONList prints an array of n elements as writeJSON would, one
// element at a time: the array is never built whole (mcpi pending --json
// of many large requests). With head (a struct or map marshalled to an object), the object head
// with the array as its member key, last: a listing that says how many
// it holds and what it left out before the elements themselves.
func writeJSONList(ios *IOStreams, head any, key string, n int, elem func(i int) any) error {
	if ios.jsonFailed.Load() {
		return nil
	}
	ios.jsonWritten.Store(true)
	w := func(b []byte) error {
		if ios.StdoutTTY && ios.Color {
			return ios.Out.WriteStyled(string(b))
		}
		if ios.StdoutTTY {
			_, err := ios.Out.Write(b)
			return err
		}
		_, err := ios.Data().Write(b)
		return err
	}
	indent, end := "  ", []byte("\n")
	if head != nil {
		b, err := json.Marshal(head)
		if err != nil {
			return err
		}
		k, _ := json.Marshal(key)
		b = append(bytes.TrimSuffix(escapeUnsafe(b), []byte("}")), ',')
		if ios.StdoutTTY {
			b = pretty.Pretty(append(b[:len(b)-1], '}'))
			b = append(bytes.TrimSuffix(bytes.TrimRight(b, "\n"), []byte("\n}")), ",\n  "...)
			if ios.Color {
				b = pretty.Color(b, nil)
			}
			indent, end = "    ", []byte("\n}\n")
		} else {
			end = []byte("}\n")
		}
		if err := w(append(append(b, k...), ':')); err != nil {
			return err
		}
	}
	if n == 0 {
		if head == nil {
			return writeRawJSON(ios, []byte("[]"))
		}
		return w(append([]byte("[]"), end...))
	}
	if err := w([]byte("[")); err != nil {
		return err
	}
	for i := range n {
		b, err := json.Marshal(elem(i))
		if err != nil {
			return err
		}
		b = escapeUnsafe(b)
		if ios.StdoutTTY {
			b = pretty.PrettyOptions(b, &pretty.Options{Width: 80, Prefix: indent, Indent: "  "})
			b = append([]byte("\n"+indent), bytes.TrimRight(b[len(indent):], "\n")...)
			if ios.Color {
				b = pretty.Color(b, nil)
			}
		}
		if i < n-1 {
			b = append(b, ',')
		}
		if err := w(b); err != nil {
			return err
		}
	}
	if ios.StdoutTTY {
		return w(append([]byte("\n"+indent[2:]+"]"), end...))
	}
	return w(append([]byte("]"), end...))
}

// contentPrinter prints content blocks for a person: text as text, binary
// content summarised (and saved under dir when set).
type contentPrinter struct {
	out   io.Writer
	errw  io.Writer
	dir   string
	saved int
}

func (p *contentPrinter) blocks(blocks []mcp.Content) error {
	for i, c := range blocks {
		if err := p.block(i, c); err != nil {
			return err
		}
	}
	return nil
}

func (p *contentPrinter) block(i int, c mcp.Content) error {
	switch c.Type {
	case "text":
		text := sanitize(c.Text, true)
		fmt.Fprint(p.out, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(p.out)
		}
	case "image", "audio":
		n := base64.StdEncoding.DecodedLen(len(c.Data))
		data, err := base64.StdEncoding.DecodeString(c.Data)
		if err == nil {
			n = len(data)
		}
		line := fmt.Sprintf("[%s %s, %s]", c.Type, sanitize(c.MimeType, false), byteSize(n))
		if err != nil {
			line += " (invalid base64: " + err.Error() + ")"
		}
		fmt.Fprintln(p.out, line)
		if err == nil {
			return p.save(i, c.Type, c.MimeType, data)
		}
	case "resource_link":
		line := fmt.Sprintf("[resource link] %s", sanitize(c.URI, false))
		var details []string
		if c.Name != "" {
			details = append(details, sanitize(c.Name, false))
		}
		if c.MimeType != "" {
			details = append(details, sanitize(c.MimeType, false))
		}
		if c.Description != "" {
			details = append(details, oneLine(c.Description))
		}
		if len(details) > 0 {
			line += " (" + strings.Join(details, ", ") + ")"
		}
		fmt.Fprintln(p.out, line)
	case "resource":
		if c.Resource == nil {
			fmt.Fprintln(p.out, "[resource] (no contents)")
			return nil
		}
		return p.resource(i, *c.Resource, "[resource]")
	default:
		b, _ := json.Marshal(c)
		fmt.Fprintf(p.out, "[%s content] %s\n", sanitize(c.Type, false), sanitize(string(b), false))
	}
	return nil
}

// resource prints one resource's contents.
func (p *contentPrinter) resource(i int, r mcp.ResourceContents, label string) error {
	head := fmt.Sprintf("%s %s", label, sanitize(r.URI, false))
	if r.MimeType != "" {
		head += " (" + sanitize(r.MimeType, false) + ")"
	}
	switch {
	case r.Text != nil:
		fmt.Fprintln(p.out, head)
		text := sanitize(*r.Text, true)
		fmt.Fprint(p.out, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(p.out)
		}
	case r.Blob != nil:
		data, err := base64.StdEncoding.DecodeString(*r.Blob)
		if err != nil {
			fmt.Fprintf(p.out, "%s: blob with invalid base64: %v\n", head, err)
			return nil
		}
		fmt.Fprintf(p.out, "%s: blob, %s\n", head, byteSize(len(data)))
		return p.save(i, "blob", r.MimeType, data)
	default:
		fmt.Fprintf(p.out, "%s: neither text nor blob\n", head)
	}
	return nil
}

func (p *contentPrinter) save(i int, kind, mimeType string, data []byte) error {
	if p.dir == "" {
		return nil
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	name, err := save.New(p.dir, fmt.Sprintf("%d-%s", i+1, kind), save.Extension(mimeType), data)
	if err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	p.saved++
	fmt.Fprintf(p.errw, "saved %s\n", name)
	return nil
}

func byteSize(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

// prettyJSON indents raw JSON for people, sanitising strings.
func prettyJSON(raw []byte) string {
	return sanitize(string(pretty.Pretty(raw)), true)
}

// jsonErrorObject is what --json prints on stdout when a command fails. Its
// message is mcpi's, cut at bounds.MaxLine as on standard error; data is
// the server's error data, as it sent it.
type jsonErrorObject struct {
	Error struct {
		Message  string          `json:"message"`
		Kind     string          `json:"kind"`
		ExitCode ExitCode        `json:"exitCode"`
		Code     *int            `json:"code,omitempty"`
		Data     json.RawMessage `json:"data,omitempty"`
	} `json:"error"`
}

func jsonError(err error) jsonErrorObject {
	var o jsonErrorObject
	o.Error.Message = bounds.ClipTo(err.Error(), bounds.MaxLine)
	o.Error.ExitCode = exitCodeFor(err)
	o.Error.Kind = errorKind(err)
	var re *mcp.RPCError
	if errors.As(err, &re) {
		code := re.Code
		o.Error.Code = &code
		o.Error.Data = re.Data
	}
	return o
}
