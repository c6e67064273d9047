package live

import (
	"encoding/json"
	"errors"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
)

// Session states.
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateStopped  = "stopped" // mcpi session stop
	StateExited   = "exited"  // the server exited or the connection ended
	StateIdle     = "idle"    // the idle timeout ended it
	StateLost     = "lost"    // the daemon is gone without a word (killed)
)

// Status is what a session says of itself: the record it keeps in the
// runtime directory, and the answer to a status request (with counters).
type Status struct {
	Name     string    `json:"name"`
	Target   string    `json:"target"`
	PID      int       `json:"pid"`
	State    string    `json:"state"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended,omitzero"`
	Reason   string    `json:"reason,omitempty"`
	LastUsed time.Time `json:"lastUsed,omitzero"`
	Idle     string    `json:"idleTimeout,omitempty"`

	Era             string   `json:"era,omitempty"`
	ProtocolVersion string   `json:"protocolVersion,omitempty"`
	Transport       string   `json:"transport,omitempty"`
	SessionID       string   `json:"sessionId,omitempty"`
	ServerName      string   `json:"serverName,omitempty"`
	ServerVersion   string   `json:"serverVersion,omitempty"`
	Commands        int64    `json:"commands"`
	Active          int64    `json:"active"`
	Failed          int64    `json:"failed"`
	StderrTail      []string `json:"stderrTail,omitempty"`
	// Restarts counts the times --restart started the server again;
	// LastRestart says when, why and what was applied again.
	Restarts    int    `json:"restarts,omitempty"`
	LastRestart string `json:"lastRestart,omitempty"`
	// Budgets are what the daemon's bounded queues hold (parked requests,
	// its log, the tails' and attached clients' queues), in count and
	// bytes, with what each refused.
	Budgets []bounds.Usage `json:"budgets,omitempty"`
	// Proto and Build are the daemon's socket protocol and build (none in
	// the records of the daemons of before the version).
	Proto int    `json:"proto,omitempty"`
	Build string `json:"build,omitempty"`
}

// Live reports whether the session's daemon was running when the status
// was taken.
func (s *Status) Live() bool { return s.State == StateRunning || s.State == StateStarting }

// WriteRecord writes s as the session's record, atomically, 0600.
func WriteRecord(dir string, s *Status) error {
	if s.Proto == 0 {
		// Every record says the protocol its daemon speaks.
		s.Proto, s.Build = ProtocolVersion(), Build()
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+s.Name+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), RecordPath(dir, s.Name))
}

// ReadRecord reads a session's record.
func ReadRecord(dir, name string) (*Status, error) {
	b, err := os.ReadFile(RecordPath(dir, name))
	if err != nil {
		return nil, err
	}
	var s Status
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	s.Name = name
	return &s, nil
}

// Names lists the sessions that have a record or a socket, sorted.
func Names(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	for _, e := range ents {
		n := e.Name()
		for _, ext := range []string{".json", ".sock"} {
			if base, ok := strings.CutSuffix(n, ext); ok && ValidName(base) == nil && !seen[base] {
				seen[base] = true
				names = append(names, base)
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// Remove deletes a session's files, its lock file included: the caller
// holds the name's lock.
func Remove(dir, name string) {
	os.Remove(SocketPath(dir, name))
	os.Remove(RecordPath(dir, name))
	os.Remove(LogPath(dir, name))
	// Last, while the caller still holds it (see Lock).
	os.Remove(LockPath(dir, name))
}

// KeepEnded is how long the record of an ended session stays for list and
// show to say why it ended.
const KeepEnded = time.Hour

// Expired reports whether an ended session's record has been kept long enough.
func (s *Status) Expired(now time.Time) bool {
	return !s.Live() && !s.Ended.IsZero() && now.Sub(s.Ended) > KeepEnded
}
