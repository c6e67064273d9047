package transport

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestCheckFrame(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr error  // nil: a well-formed frame
		wantMsg string // a part of the error text
	}{
		{name: "object", data: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{name: "batch", data: `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]`},
		{name: "empty array", data: `[]`},
		{name: "leading and trailing whitespace", data: " \t\r\n{\"a\":1} \n"},
		{name: "unicode", data: `{"s":"héllo ✓ 🎉"}`},
		{name: "not JSON", data: `hello`, wantErr: ErrNotJSON},
		{name: "truncated JSON", data: `{"a":`, wantErr: ErrNotJSON},
		{name: "two values", data: `{} {}`, wantErr: ErrNotJSON},
		{name: "empty", data: ``, wantErr: ErrNotJSON},
		{name: "whitespace only", data: " \n", wantErr: ErrNotJSON},
		{name: "number", data: `42`, wantErr: ErrNotJSON, wantMsg: "object or an array"},
		{name: "string", data: `"x"`, wantErr: ErrNotJSON, wantMsg: "object or an array"},
		{name: "null", data: `null`, wantErr: ErrNotJSON, wantMsg: "object or an array"},
		{name: "scalar after whitespace", data: "  true", wantErr: ErrNotJSON, wantMsg: "object or an array"},
		{name: "invalid UTF-8 at start", data: "\xff{}", wantErr: ErrNotUTF8, wantMsg: "offset 0"},
		{name: "invalid UTF-8 in string", data: "{\"a\":\"x\xc3\"}", wantErr: ErrNotUTF8, wantMsg: "offset 7"},
		{name: "invalid UTF-8 after multibyte", data: "{\"é\":\"\xed\xa0\x80\"}", wantErr: ErrNotUTF8, wantMsg: "offset 7"},
		{name: "U+FFFD is valid", data: "{\"a\":\"\xef\xbf\xbd\"}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkFrame([]byte(tt.data))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("checkFrame(%q) = %v, want nil", tt.data, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("checkFrame(%q) = %v, want an error wrapping %v", tt.data, err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("checkFrame(%q) = %q, want it to contain %q", tt.data, err, tt.wantMsg)
			}
		})
	}
}

func TestFirstInvalidUTF8(t *testing.T) {
	tests := []struct {
		data string
		want int
	}{
		{"", -1},
		{"abc", -1},
		{"é✓", -1},
		{"\x80", 0},
		{"ab\xff", 2},
		{"é\xe2\x9c", 2}, // a rune cut short
		{"\xef\xbf\xbd\xff", 3},
	}
	for _, tt := range tests {
		if got := firstInvalidUTF8([]byte(tt.data)); got != tt.want {
			t.Errorf("firstInvalidUTF8(%q) = %d, want %d", tt.data, got, tt.want)
		}
	}
}

func TestTrimEOL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"a", "a"},
		{"a\n", "a"},
		{"a\r\n", "a"},
		{"a\r", "a\r"}, // only a trailing LF or CRLF is a stdio line end
		{"a\n\n", "a\n"},
		{"\r\n", ""},
	}
	for _, tt := range tests {
		if got := string(TrimEOL([]byte(tt.in))); got != tt.want {
			t.Errorf("TrimEOL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestIsBlank(t *testing.T) {
	for _, s := range []string{"", " ", "\t\r\n ", "\n"} {
		if !IsBlank([]byte(s)) {
			t.Errorf("IsBlank(%q) = false", s)
		}
	}
	for _, s := range []string{"x", " {} ", "\x00", "\v"} {
		if IsBlank([]byte(s)) {
			t.Errorf("IsBlank(%q) = true", s)
		}
	}
}

type readLineResult struct {
	line    string
	tooLong int
	err     error
}

// readLines calls readLine until it fails, with a reader of the smallest
// buffer bufio allows so that every line longer than 16 bytes spans chunks.
func readLines(t *testing.T, r io.Reader, max, keep int) []readLineResult {
	t.Helper()
	br := bufio.NewReaderSize(r, 16)
	var out []readLineResult
	for range 1000 {
		line, tooLong, err := readLine(br, max, keep)
		out = append(out, readLineResult{string(line), tooLong, err})
		if err != nil {
			return out
		}
	}
	t.Fatal("readLine never failed")
	return nil
}

func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 100) // longer than the 16-byte buffer
	tests := []struct {
		name      string
		in        string
		max, keep int
		want      []readLineResult
	}{
		{
			name: "short lines",
			in:   "a\nbb\n",
			max:  100, keep: 10,
			want: []readLineResult{{"a\n", 0, nil}, {"bb\n", 0, nil}, {"", 0, io.EOF}},
		},
		{
			name: "lines longer than the buffer are kept whole",
			in:   long + "\n" + long + "y\r\n",
			max:  1000, keep: 10,
			want: []readLineResult{{long + "\n", 0, nil}, {long + "y\r\n", 0, nil}, {"", 0, io.EOF}},
		},
		{
			name: "final line without newline",
			in:   "a\n" + long,
			max:  1000, keep: 10,
			want: []readLineResult{{"a\n", 0, nil}, {long, 0, io.EOF}},
		},
		{
			name: "line longer than max: prefix kept, length reported, next lines read",
			in:   "ok\n" + long + "\nafter\n",
			max:  50, keep: 8,
			want: []readLineResult{{"ok\n", 0, nil}, {"xxxxxxxx", 101, nil}, {"after\n", 0, nil}, {"", 0, io.EOF}},
		},
		{
			name: "too long within the first chunk",
			in:   "abcdefghij\nz\n",
			max:  5, keep: 3,
			want: []readLineResult{{"abc", 11, nil}, {"z\n", 0, nil}, {"", 0, io.EOF}},
		},
		{
			name: "too long and cut by EOF",
			in:   long,
			max:  50, keep: 4,
			want: []readLineResult{{"xxxx", 100, io.EOF}},
		},
		{
			name: "the newline counts towards max",
			in:   "abcde\nabcd\n",
			max:  5, keep: 5,
			want: []readLineResult{{"abcde", 6, nil}, {"abcd\n", 0, nil}, {"", 0, io.EOF}},
		},
		{
			name: "empty lines",
			in:   "\n\n",
			max:  5, keep: 5,
			want: []readLineResult{{"\n", 0, nil}, {"\n", 0, nil}, {"", 0, io.EOF}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, rd := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.in)},
				{"byte by byte", iotest.OneByteReader(strings.NewReader(tt.in))},
			} {
				got := readLines(t, rd.r, tt.max, tt.keep)
				if !equalResults(got, tt.want) {
					t.Errorf("%s reader:\n got %v\nwant %v", rd.name, got, tt.want)
				}
			}
		})
	}
}

func equalResults(a, b []readLineResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].line != b[i].line || a[i].tooLong != b[i].tooLong || !errors.Is(a[i].err, b[i].err) {
			return false
		}
	}
	return true
}

func TestReadLineReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(boom))
	line, tooLong, err := readLine(bufio.NewReader(r), 100, 10)
	if string(line) != "partial" || tooLong != 0 || !errors.Is(err, boom) {
		t.Errorf("readLine = %q, %d, %v; want the partial line and the reader's error", line, tooLong, err)
	}
}

func TestReadLineDoesNotAlias(t *testing.T) {
	// The line must survive the next read, which reuses bufio's buffer.
	br := bufio.NewReaderSize(strings.NewReader("first\nsecond\n"), 16)
	first, _, _ := readLine(br, 100, 100)
	second, _, _ := readLine(br, 100, 100)
	if !bytes.Equal(first, []byte("first\n")) || !bytes.Equal(second, []byte("second\n")) {
		t.Errorf("got %q, %q", first, second)
	}
}
