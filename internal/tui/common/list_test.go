package common

import (
	"fmt"
	"testing"
)

// TestScrollOverflowReachesTheLastLine: in a box whose last row says what
// is left out, scrolling as far as it goes shows the text's last line and
// nothing below it, whatever the text's length and the box's height.
func TestScrollOverflowReachesTheLastLine(t *testing.T) {
	for n := 1; n <= 12; n++ {
		lines := make([]string, n)
		for i := range lines {
			lines[i] = fmt.Sprint(i)
		}
		for rows := 2; rows <= 12; rows++ {
			s := Scroll{Offset: n}
			shown, below, more := s.Overflow(lines, rows)
			if more != (n > rows) {
				t.Errorf("n=%d rows=%d: more=%v", n, rows, more)
			}
			if got := len(shown); more && got != rows-1 || !more && got != n {
				t.Errorf("n=%d rows=%d: %d lines shown", n, rows, got)
			}
			if shown[len(shown)-1] != lines[n-1] || below != 0 {
				t.Errorf("n=%d rows=%d: at the end, last shown %q, %d below", n, rows, shown[len(shown)-1], below)
			}
			s.Offset = 0
			if _, below, _ := s.Overflow(lines, rows); more && below != n-(rows-1) {
				t.Errorf("n=%d rows=%d: at the top, %d below, want %d", n, rows, below, n-(rows-1))
			}
		}
	}
}
