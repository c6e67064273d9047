package live

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// Statuses returns every session's status: from its daemon when it
// answers, else from the record it left. A socket nobody answers on any
// more is removed (Dial does), a daemon gone without a word is
// recorded as lost, and records kept long enough are removed, as are the
// lock files an older mcpi left alone.
func Statuses(dir string) ([]*Status, error) {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err := CheckDir(dir); err != nil {
		return nil, err
	}
	RemoveStrayLocks(dir)
	names, err := Names(dir)
	if err != nil {
		return nil, err
	}
	var out []*Status
	now := time.Now()
	for _, n := range names {
		st, err := Ask(dir, n, OpStatus)
		if err == nil {
			out = append(out, st)
			continue
		}
		if errors.Is(err, ErrUnsafeDir) {
			return nil, err
		}
		rec, rerr := ReadRecord(dir, n)
		if rerr != nil {
			continue
		}
		if rec.Live() && errors.Is(err, ErrNoDaemon) {
			rec = MarkLost(dir, rec)
		}
		if rec.Expired(now) && RemoveUnowned(dir, n) {
			continue
		}
		out = append(out, rec)
	}
	return out, nil
}

// MarkLost records that a session's daemon is gone without a word, unless
// the name is owned again (a new daemon starts under it).
func MarkLost(dir string, rec *Status) *Status {
	lock, err := Lock(dir, rec.Name)
	if err != nil {
		return rec
	}
	defer lock.Close()
	rec.State = StateLost
	rec.Reason = fmt.Sprintf("its daemon (pid %d) is gone without saying why (killed?)", rec.PID)
	rec.Ended = time.Now()
	rec.Active = 0
	WriteRecord(dir, rec)
	os.Remove(SocketPath(dir, rec.Name))
	return rec
}
