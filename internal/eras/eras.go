package eras

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"
)

// The era each server configuration answered with is remembered, as the
// spec allows, so that its next command starts in it without the probe. An
// era taken for legacy because server/discover got no answer in time is
// not: a server still starting is silent too, and a guess remembered
// would hold a modern server in the legacy era. The memory is a JSON file in
// the user's cache directory, keyed by a hash of the configuration (the
// command, its arguments, environment and directory, or the URL and
// transport), never the configuration itself.

// maxEras bounds the memory; the oldest entries go first.
const maxEras = 500

type record struct {
	Era string    `json:"era"`
	At  time.Time `json:"at"`
}

var mu sync.Mutex

// File is where eras are remembered: $XDG_CACHE_HOME/mcpi/eras.json (or
// the platform's cache directory), "" when there is none.
func File() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "mcpi", "eras.json")
}

// MaxFile bounds what is read of the memory: maxEras entries take
// about 50 KB. A larger file is not mcpi's, and is ignored.
const MaxFile = 1 << 20

// Lookup is the era remembered for key, if any.
func Lookup(key string, warn func(string)) (string, bool) {
	r, ok := load(warn)[key]
	return r.Era, ok
}

// load reads the memory. It never blocks a command and never holds
// more than MaxFile: a file that is not a regular one (a FIFO, a
// device, a symbolic link to /dev/zero), or one that is larger, is ignored,
// and warn, when not nil, says why. A memory that cannot be read only
// costs a probe.
func load(warn func(string)) map[string]record {
	m := map[string]record{}
	path := File()
	if path == "" {
		return m
	}
	b, err := readFile(path)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		if warn != nil {
			warn(fmt.Sprintf("the era memory %s is ignored: %v", path, err))
		}
	case err == nil:
		json.Unmarshal(b, &m)
	}
	return m
}

// readFile reads path if it is a regular file of at most MaxFile
// bytes.
func readFile(path string) ([]byte, error) {
	f, err := openFile(path)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("it is a symbolic link")
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("it is not a regular file (%v)", fi.Mode().Type())
	}
	if fi.Size() > MaxFile {
		return nil, fmt.Errorf("it holds %d bytes, more than the %d it may", fi.Size(), MaxFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err == nil && len(b) > MaxFile {
		return nil, fmt.Errorf("it holds more than the %d bytes it may", MaxFile)
	}
	return b, err
}

// Remember records the era a server spoke; Forget drops it. Neither
// fails a command: the memory only saves time.
func Remember(key, era string) {
	update(func(m map[string]record) { m[key] = record{Era: era, At: time.Now().UTC()} })
}

func Forget(key string) { update(func(m map[string]record) { delete(m, key) }) }

func update(change func(map[string]record)) {
	path := File()
	if path == "" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	m := load(nil)
	change(m)
	if len(m) > maxEras {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return m[keys[i]].At.Before(m[keys[j]].At) })
		for _, k := range keys[:len(m)-maxEras] {
			delete(m, k)
		}
	}
	b, err := json.Marshal(m)
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".eras-*.json")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Chmod(tmp.Name(), 0o600) != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}
