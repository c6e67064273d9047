package live

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// The socket's protocol has a version, and the binary a build (tmux's
// PROTOCOL_VERSION, gopls's build ID): an upgraded mcpi must never have
// its command lines parsed by an older daemon's command tree.
//
//   - Every request carries Proto and Build. A daemon refuses a run or an
//     attach of another protocol with one sentence that names both and the
//     way out (stop the session and start it again); status and stop are
//     answered whatever the version, so that the way out always works.
//   - A build that differs with the same protocol is a warning: the daemon
//     runs the command with its own tree, and says so.
//   - The daemons of before the version (protocol 1) cannot answer that:
//     their records carry no protocol, and a client reads the record before
//     it sends a command, and refuses with the same sentence.

// protocolVersion is the socket protocol's version; a string so that a
// test can build another with -ldflags -X.
var protocolVersion = "2"

// ProtocolVersion returns the socket protocol's version.
func ProtocolVersion() int {
	n, _ := strconv.Atoi(protocolVersion)
	return n
}

// buildID, when set with -ldflags -X, is the build; otherwise Build
// computes it.
var buildID string

var buildOnce = sync.OnceValue(computeBuild)

// Build returns the binary's build: its VCS revision (with "+dirty" for a
// modified tree) and a hash of the executable.
func Build() string {
	if buildID != "" {
		return buildID
	}
	return buildOnce()
}

func computeBuild() string {
	rev := "dev"
	if info, ok := debug.ReadBuildInfo(); ok {
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value[:min(12, len(s.Value))]
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty {
			rev += "+dirty"
		}
	}
	return rev + " " + executableHash()
}

// executableHash is the first 12 hex digits of the SHA-256 of the running
// executable, kept in the user's cache by the executable's path, size and
// time, so that hashing it (milliseconds) is paid once per build.
func executableHash() string {
	exe, err := os.Executable()
	if err != nil {
		return "nohash"
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "nohash"
	}
	key := fmt.Sprintf("%s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
	cache := ""
	if dir, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(dir, "mcpi", "build-id")
		if h := readBuildCache(cache, key); h != "" {
			return h
		}
	}
	f, err := os.Open(exe)
	if err != nil {
		return "nohash"
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return "nohash"
	}
	h := hex.EncodeToString(sum.Sum(nil))[:12]
	if cache != "" {
		if os.MkdirAll(filepath.Dir(cache), 0o700) == nil {
			tmp := cache + "." + strconv.Itoa(os.Getpid())
			if os.WriteFile(tmp, []byte(key+"\n"+h+"\n"), 0o600) == nil {
				os.Rename(tmp, cache)
			}
		}
	}
	return h
}

// readBuildCache returns the hash the cache holds for key, or "". The file
// is read only when it is a regular file, and only its first lines.
func readBuildCache(path, key string) string {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 4096))
	var lines []string
	for sc.Scan() && len(lines) < 2 {
		lines = append(lines, sc.Text())
	}
	if len(lines) == 2 && lines[0] == key && len(lines[1]) == 12 {
		return lines[1]
	}
	return ""
}

// MismatchError is a session whose daemon speaks another protocol than
// the command talking to it. Each side fills it the same way: Daemon is
// the daemon's protocol, Client the command's.
type MismatchError struct {
	Name   string
	Daemon int // 1: a daemon of before the version
	Client int // 1: a command of before the version
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("session %s was started by an mcpi that speaks socket protocol %d, and this mcpi speaks %d: stop it (mcpi session stop %s) and start it again", e.Name, e.Daemon, e.Client, e.Name)
}

// CheckRecord refuses a session whose record says it speaks another
// protocol (a record of before the version says none: protocol 1).
func CheckRecord(name string, rec *Status) error {
	theirs := rec.Proto
	if theirs == 0 {
		theirs = 1
	}
	if theirs != ProtocolVersion() {
		return &MismatchError{Name: name, Daemon: theirs, Client: ProtocolVersion()}
	}
	return nil
}

// buildWarning is what a daemon says to a command of another build.
func buildWarning(name, theirs, ours string) string {
	if theirs == "" || theirs == ours {
		return ""
	}
	return fmt.Sprintf("warning: session %s runs mcpi build %s, and this is build %s: the session's daemon ran the command (stop and start the session to use this build)\n", name, strings.TrimSpace(ours), strings.TrimSpace(theirs))
}
