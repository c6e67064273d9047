package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/pretty"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// writeRawJSON prints JSON as the server sent it: pretty (and coloured when
// colour is on) on a terminal, one line otherwise.
func writeRawJSON(ios *IOStreams, raw []byte) error {
	raw = escapeUnsafe(raw)
	if ios.StdoutTTY {
		out := pretty.Pretty(raw)
		if ios.Color {
			out = pretty.Color(out, nil)
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
	_, err := ios.Out.Write(buf.Bytes())
	return err
}

// escapeUnsafe rewrites the characters that JSON allows raw inside strings
// but a terminal may act on (C1 controls, bidirectional overrides, line and
// paragraph separators, DEL) as \u escapes. The JSON means the same; only
// its spelling changes, and nothing a server sent reaches the terminal raw.
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
		if c == 0x7f || unsafeInJSON(r) {
			if out == nil {
				out = append(make([]byte, 0, len(b)+16), b[:i]...)
			}
			out = fmt.Appendf(out, `\u%04x`, r)
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

// unsafeInJSON are the runes escapeUnsafe rewrites.
func unsafeInJSON(r rune) bool {
	return (r >= 0x80 && r < 0xa0) || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') ||
		r == '\u200e' || r == '\u200f' || r == '\u061c' || r == '\u2028' || r == '\u2029' || r == '\ufeff'
}

// safeWriter sanitises everything written through it, keeping newlines:
// for reports that quote server data (verify's diff).
type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, sanitize(string(p), true)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeJSON marshals v and prints it like writeRawJSON.
func writeJSON(ios *IOStreams, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeRawJSON(ios, b)
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
	ext := ".bin"
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		ext = exts[0]
		for _, e := range exts {
			if e == ".png" || e == ".jpg" || e == ".wav" || e == ".mp3" || e == ".json" || e == ".txt" {
				ext = e
			}
		}
	}
	name := filepath.Join(p.dir, fmt.Sprintf("%d-%s%s", i+1, kind, ext))
	if err := os.WriteFile(name, data, 0o644); err != nil {
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

// jsonErrorObject is what --json prints on stdout when a command fails.
type jsonErrorObject struct {
	Error struct {
		Message  string          `json:"message"`
		ExitCode ExitCode        `json:"exitCode"`
		Code     *int            `json:"code,omitempty"`
		Data     json.RawMessage `json:"data,omitempty"`
	} `json:"error"`
}

func jsonError(err error) jsonErrorObject {
	var o jsonErrorObject
	o.Error.Message = err.Error()
	o.Error.ExitCode = exitCodeFor(err)
	var re *mcp.RPCError
	if errors.As(err, &re) {
		code := re.Code
		o.Error.Code = &code
		o.Error.Data = re.Data
	}
	return o
}
