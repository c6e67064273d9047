package iostreams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tidwall/pretty"

	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// WriteRawJSON prints JSON as the server sent it, with every character a
// terminal may act on or hide written as a \u escape (EscapeUnsafe: every
// value reads back the same). On a terminal, for a person: pretty, and
// coloured when colour is on, through the sink. Otherwise, for a program:
// one line, through Data.
func WriteRawJSON(ios *IOStreams, raw []byte) error {
	if ios.JSONFailed() {
		// The error object takes the document's place (withJSONError).
		return nil
	}
	return WriteJSONDocument(ios, raw)
}

// WriteJSONDocument is WriteRawJSON for any document, the error object
// included.
func WriteJSONDocument(ios *IOStreams, raw []byte) error {
	ios.MarkJSONWritten()
	raw = EscapeUnsafe(raw)
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

// EscapeUnsafe rewrites the characters that JSON allows raw inside strings
// but a terminal may act on or hide (safetext.Unsafe: C1 controls, bidi
// and zero-width characters, tag characters, separators, DEL) as \u
// escapes, and invalid UTF-8 as \ufffd. The JSON means the same, save for
// the invalid bytes; only its spelling changes.
func EscapeUnsafe(b []byte) []byte {
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

// WriteJSONLine prints v as one line of JSON Lines (mcpi tail --json),
// escaped like WriteRawJSON; on a terminal through the sink.
func WriteJSONLine(ios *IOStreams, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(EscapeUnsafe(b), '\n')
	if ios.StdoutTTY {
		_, err = ios.Out.Write(b)
	} else {
		_, err = ios.Data().Write(b)
	}
	return err
}

// WriteDocument prints a document whose bytes are part of what it says (a
// snapshot, byte-identical when nothing changed): as they are on a pipe,
// through the sink on a terminal; unsafe characters escaped either way.
func WriteDocument(ios *IOStreams, b []byte) error {
	b = EscapeUnsafe(b)
	if ios.StdoutTTY {
		_, err := ios.Out.Write(b)
		return err
	}
	_, err := ios.Data().Write(b)
	return err
}

// WriteJSON marshals v and prints it like WriteRawJSON.
func WriteJSON(ios *IOStreams, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return WriteRawJSON(ios, b)
}

// WriteJSONList prints an array of n elements as WriteJSON would, one
// element at a time: the array is never built whole (mcpi pending --json
// of many large requests). With head (a struct or map marshalled to an object), the object head
// with the array as its member key, last: a listing that says how many
// it holds and what it left out before the elements themselves.
func WriteJSONList(ios *IOStreams, head any, key string, n int, elem func(i int) any) error {
	if ios.JSONFailed() {
		return nil
	}
	ios.MarkJSONWritten()
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
		b = append(bytes.TrimSuffix(EscapeUnsafe(b), []byte("}")), ',')
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
			return WriteRawJSON(ios, []byte("[]"))
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
		b = EscapeUnsafe(b)
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

// ByteSize says n bytes for a person.
func ByteSize(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

// PrettyJSON indents raw JSON for people, sanitising strings.
func PrettyJSON(raw []byte) string {
	return safetext.Sanitize(string(pretty.Pretty(raw)), true)
}

// EscapingWriter writes JSON to W with EscapeUnsafe's spelling. Each
// write must be whole JSON values (check.WriteSARIF's are): a rune is never
// split.
type EscapingWriter struct{ W io.Writer }

func (e EscapingWriter) Write(b []byte) (int, error) {
	if _, err := e.W.Write(EscapeUnsafe(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}
