package cli

import (
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/mcpi-dev/mcpi/internal/session"
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

type eraRecord struct {
	Era string    `json:"era"`
	At  time.Time `json:"at"`
}

var eraMu sync.Mutex

// eraFile is where eras are remembered: $XDG_CACHE_HOME/mcpi/eras.json (or
// the platform's cache directory), "" when there is none.
func eraFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "mcpi", "eras.json")
}

// eraKey identifies the server configuration o names.
func (o *TargetOptions) eraKey() string {
	b, _ := json.Marshal(struct {
		Command   []string
		Env       []string
		Dir       string
		URL       string
		Transport string
	}{o.Command, o.Env, o.Dir, o.URL, o.Transport})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// chooseEra is the era to start with: --era, else $MCPI_ERA, else the one
// remembered for this server, else auto; reason says why when it was not
// --era; remembered says it came from the memory.
func (o *TargetOptions) chooseEra(warn func(string)) (era, reason string, remembered bool) {
	if o.Era != "" {
		return o.Era, "", false
	}
	if e := os.Getenv("MCPI_ERA"); e != "" {
		return e, "forced by MCPI_ERA=" + e, false
	}
	if o.Protocol != "" {
		return session.EraAuto, "", false
	}
	if r, ok := loadEras(warn)[o.eraKey()]; ok && (r.Era == session.EraLegacy || r.Era == session.EraModern) {
		return r.Era, "remembered: this server spoke it last time (" + eraFile() + "; --era auto detects again)", true
	}
	return session.EraAuto, "", false
}

// maxEraFile bounds what is read of the memory: maxEras entries take
// about 50 KB. A larger file is not mcpi's, and is ignored.
const maxEraFile = 1 << 20

// loadEras reads the memory. It never blocks a command and never holds
// more than maxEraFile: a file that is not a regular one (a FIFO, a
// device, a symbolic link to /dev/zero), or one that is larger, is ignored,
// and warn, when not nil, says why. A memory that cannot be read only
// costs a probe.
func loadEras(warn func(string)) map[string]eraRecord {
	m := map[string]eraRecord{}
	path := eraFile()
	if path == "" {
		return m
	}
	b, err := readEraFile(path)
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

// readEraFile reads path if it is a regular file of at most maxEraFile
// bytes.
func readEraFile(path string) ([]byte, error) {
	f, err := openEraFile(path)
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
	if fi.Size() > maxEraFile {
		return nil, fmt.Errorf("it holds %d bytes, more than the %d it may", fi.Size(), maxEraFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxEraFile+1))
	if err == nil && len(b) > maxEraFile {
		return nil, fmt.Errorf("it holds more than the %d bytes it may", maxEraFile)
	}
	return b, err
}

// rememberEra records the era a server spoke; forgetEra drops it. Neither
// fails a command: the memory only saves time.
func rememberEra(key, era string) {
	updateEras(func(m map[string]eraRecord) { m[key] = eraRecord{Era: era, At: time.Now().UTC()} })
}

func forgetEra(key string) { updateEras(func(m map[string]eraRecord) { delete(m, key) }) }

func updateEras(change func(map[string]eraRecord)) {
	path := eraFile()
	if path == "" {
		return
	}
	eraMu.Lock()
	defer eraMu.Unlock()
	m := loadEras(nil)
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
