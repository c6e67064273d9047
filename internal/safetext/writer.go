package safetext

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpi-dev/mcpi/internal/bounds"
)

// Writer is a stream for a person: every byte written to it crosses
// Sanitize (newlines and tabs kept), so no caller can write a control
// character, an escape sequence or an invisible character raw, whatever
// its format string or arguments hold. A rune split across two writes is
// joined before it is judged. The only escape sequences it writes are
// those of its own methods: SGR colours (WriteStyled) and erasing the
// current line (EraseLine). With SetMaxLine it also bounds how long a line
// may be, whatever a caller quotes in it. It is safe for concurrent use.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	tail  [utf8.UTFMax]byte
	ntail int

	maxLine int   // 0: no bound
	lineLen int   // bytes written of the current line
	cut     int64 // bytes of the current line not written
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// SetMaxLine bounds each line w writes to n bytes (of what it writes, the
// escapes it makes visible included): the rest of a longer line is
// dropped, and its end says how much, "… (4.0 MiB more)". Zero or less
// removes the bound.
func (w *Writer) SetMaxLine(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.maxLine = n
}

// Write writes the sanitized form of p. It reports len(p) on success, as
// the bytes it was given were all accounted for.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data := p
	if w.ntail > 0 {
		data = append(w.tail[:w.ntail:w.ntail], p...)
		w.ntail = 0
	}
	keep := incompleteRune(data)
	body := data[:len(data)-keep]
	if err := w.writeLines(Sanitize(string(body), true), false); err != nil {
		return 0, err
	}
	w.ntail = copy(w.tail[:], data[len(data)-keep:])
	return len(p), nil
}

// WriteString is Write for a string.
func (w *Writer) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Flush writes a rune held back because its last bytes had not come yet,
// as the invalid bytes it then is, and says how much of an unfinished line
// was cut.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ntail > 0 {
		s := Sanitize(string(w.tail[:w.ntail]), true)
		w.ntail = 0
		if err := w.writeLines(s, false); err != nil {
			return err
		}
	}
	if w.cut > 0 {
		// Say now what the unfinished line lost; the rest of it, if any
		// comes, is dropped and said at its end.
		err := w.writeString(cutMarker(w.cut))
		w.cut = 0
		return err
	}
	return nil
}

// WriteStyled writes s keeping its SGR sequences (colours and text
// attributes, which change how text looks and nothing else); every other
// escape sequence and unsafe character is made visible, as Screen does.
func (w *Writer) WriteStyled(s string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeLines(Screen(s), true)
}

// EraseLine returns the cursor to the start of the line and clears it: for
// a status line that rewrites itself on a terminal.
func (w *Writer) EraseLine() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lineLen, w.cut = 0, 0
	return w.writeString("\r\x1b[K")
}

// writeLines writes s, safe already, cutting each line at maxLine. styled
// says s may hold SGR sequences: a cut does not split one, and resets the
// style before saying what was cut.
func (w *Writer) writeLines(s string, styled bool) error {
	if w.maxLine <= 0 {
		return w.writeString(s)
	}
	if w.cut == 0 && len(s) <= w.maxLine-w.lineLen && strings.IndexByte(s, '\n') < 0 {
		w.lineLen += len(s)
		return w.writeString(s)
	}
	var b strings.Builder
	for s != "" {
		seg, rest, newline := strings.Cut(s, "\n")
		if room := w.maxLine - w.lineLen; w.cut == 0 && len(seg) <= room {
			b.WriteString(seg)
			w.lineLen += len(seg)
		} else {
			keep := 0
			if w.cut == 0 {
				keep = room
				for keep > 0 && !utf8.RuneStart(seg[keep]) {
					keep--
				}
				if styled {
					if i := strings.LastIndexByte(seg[:keep], 0x1b); i >= 0 && sgrLen(seg[i:keep]) == 0 {
						keep = i
					}
				}
				b.WriteString(seg[:keep])
				if styled {
					b.WriteString("\x1b[0m")
				}
			}
			w.cut += int64(len(seg) - keep)
			w.lineLen = w.maxLine
		}
		if newline {
			if w.cut > 0 {
				b.WriteString(cutMarker(w.cut))
			}
			b.WriteByte('\n')
			w.lineLen, w.cut = 0, 0
		}
		s = rest
	}
	return w.writeString(b.String())
}

// cutMarker says how much of a line was cut.
func cutMarker(n int64) string { return "… (" + bounds.Size(n) + " more)" }

func (w *Writer) writeString(s string) error {
	if s == "" {
		return nil
	}
	_, err := io.WriteString(w.w, s)
	return err
}

// incompleteRune is how many bytes at the end of p start a rune whose
// remaining bytes have not arrived (0 when p ends on a whole rune or on
// bytes that can never become one).
func incompleteRune(p []byte) int {
	for n := 1; n <= utf8.UTFMax-1 && n <= len(p); n++ {
		c := p[len(p)-n]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a leading byte: is the rune it starts cut short?
			if c >= 0xc2 && c <= 0xf4 && !utf8.FullRune(p[len(p)-n:]) {
				return n
			}
			return 0
		}
	}
	return 0
}

// Screen makes a frame of styled text safe for a terminal: SGR sequences
// (ESC [ parameters m) are kept, since they only set colours and text
// attributes; every other escape sequence (cursor movement, OSC titles,
// hyperlinks and clipboard writes, DCS, APC, PM, SOS), every other control
// except newline and tab, and every rune Unsafe reports is made visible,
// as Sanitize does. The TUI passes every frame it draws through it, so a
// pane that forgot to sanitise a server's text still cannot drive the
// terminal.
func Screen(s string) string {
	i := firstUnsafeInScreen(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 32)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c == 0x1b {
			if n := sgrLen(s[i:]); n > 0 {
				b.WriteString(s[i : i+n])
				i += n
				continue
			}
		}
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			b.WriteByte(c)
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		appendSanitized(&b, s[i:i+size], true)
		i += size
	}
	return b.String()
}

// firstUnsafeInScreen is the index of the first byte Screen must change,
// or -1.
func firstUnsafeInScreen(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f, c == '\n', c == '\t':
			i++
		case c == 0x1b:
			n := sgrLen(s[i:])
			if n == 0 {
				return i
			}
			i += n
		case c < 0x80:
			return i
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r == utf8.RuneError && size == 1) || Unsafe(r) {
				return i
			}
			i += size
		}
	}
	return -1
}

// sgrLen is the length of the SGR sequence s starts with (ESC [ digits,
// ';' and ':' then 'm'), or 0 when it starts with anything else.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s) && i < 128; i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == ';', c == ':':
		case c == 'm':
			return i + 1
		default:
			return 0
		}
	}
	return 0
}
