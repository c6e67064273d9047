package daemon

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// LogFile is the daemon's log file (its stderr, which only the daemon's
// sinks write), bounded in bytes.
type LogFile struct {
	mu      sync.Mutex
	w       io.Writer
	f       *os.File // w, when it is a file that can start again
	budget  *bounds.Budget
	cleared int64
}

func NewLogFile(w io.Writer, maxBytes int64) *LogFile {
	l := &LogFile{w: w, budget: bounds.NewBudget("daemon log", 0, maxBytes)}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			l.f = f
			// What was written before (the daemon's start) counts too.
			if off, err := f.Seek(0, io.SeekCurrent); err == nil && off > 0 {
				if l.budget.Take(off) != nil {
					l.restart()
				}
			}
		}
	}
	return l
}

// restart empties the file and says so in it. l.mu is held (or l is new).
func (l *LogFile) restart() {
	_, n := l.budget.Drain()
	l.cleared += n
	if l.f != nil {
		l.f.Truncate(0)
		l.f.Seek(0, io.SeekStart)
	}
	note := fmt.Sprintf("mcpi: %s: this log reached its cap of %s: the %s before this line were cleared (%s since the session started)\n",
		time.Now().Format(time.RFC3339), bounds.Size(l.budget.Usage().MaxBytes), bounds.Size(n), bounds.Size(l.cleared))
	if l.budget.Take(int64(len(note))) == nil {
		io.WriteString(l.w, note)
	}
}

func (l *LogFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	if l.budget.Take(int64(n)) != nil {
		l.restart()
		if l.budget.Take(int64(n)) != nil {
			// One write larger than the whole log: its start, clipped.
			u := l.budget.Usage()
			cut := []byte(fmt.Sprintf("… (%s more, clipped: the log holds %s)\n", bounds.Size(int64(n)), bounds.Size(u.MaxBytes)))
			room := max(int(u.MaxBytes-u.Bytes)-len(cut), 0)
			p = append(p[:room:room], cut...)
			l.budget.Take(int64(len(p)))
		}
	}
	if _, err := l.w.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

// Log writes the daemon's own lines and the session's warnings to
// the daemon's log (through a sink: no server text reaches it raw), the
// warnings of each kind counted past bounds.WarningBurst.
type Log struct {
	mu    sync.Mutex
	out   *safetext.Writer
	burst int64
	kinds map[string]int64
}

func NewLog(w io.Writer) *Log {
	return &Log{out: safetext.NewWriter(w), burst: bounds.WarningBurst, kinds: map[string]int64{}}
}

func (d *Log) Printf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out, format+"\n", args...)
	d.out.Flush()
}

// warning writes a warning of the session, or counts it.
func (d *Log) Warning(w session.Warning) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.kinds[w.Kind] + 1
	d.kinds[w.Kind] = n
	switch {
	case n <= d.burst:
		fmt.Fprintf(d.out, "warning: %s: %s\n", safetext.OneLine(w.Message), quoteData(w.Data))
	case powerOfTen(n):
		fmt.Fprintf(d.out, "warning: %d warnings of kind %s so far; the first %d are above, the others only counted\n", n, w.Kind, d.burst)
	default:
		return
	}
	d.out.Flush()
}

// summary writes how many warnings of each kind were only counted.
func (d *Log) Summary() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(d.kinds)) {
		if n := d.kinds[k]; n > d.burst {
			fmt.Fprintf(d.out, "warning: %d warnings of kind %s in all; the first %d are above, the others were only counted\n", n, k, d.burst)
		}
	}
	d.out.Flush()
}

func powerOfTen(n int64) bool {
	for n >= 10 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}
