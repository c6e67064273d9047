package live

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var nameJunk = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DefaultName names a session after its target: the configuration entry
// server, the host and port of serverURL, or the server command (the
// package a runner such as npx runs, rather than the runner).
func DefaultName(server, serverURL string, command []string) string {
	var n string
	switch {
	case server != "":
		n = server
	case serverURL != "":
		if u, err := url.Parse(serverURL); err == nil {
			n = u.Host
		}
	case len(command) > 0:
		n = filepath.Base(command[0])
		switch strings.TrimSuffix(n, ".exe") {
		case "npx", "uvx", "bunx", "pnpx", "node", "python", "python3", "deno", "uv", "pipx", "docker":
			for _, a := range command[1:] {
				if !strings.HasPrefix(a, "-") {
					// @scope/package@version: package; dir/server.py: server
					n, _, _ = strings.Cut(filepath.Base(a), "@")
					n = strings.TrimSuffix(n, filepath.Ext(n))
					break
				}
			}
		}
	}
	n = strings.Trim(nameJunk.ReplaceAllString(n, "-"), "-._")
	if len(n) > 40 {
		n = n[:40]
	}
	if ValidName(n) != nil {
		n = "session"
	}
	return n
}

// Claim takes the lock of a session's name: the one given (ErrLocked
// when a session has it: running, or starting), else the first one made
// from base that no session has.
func Claim(dir, name, base string) (string, *os.File, error) {
	if name != "" {
		lock, err := Lock(dir, name)
		if err != nil {
			return "", nil, err
		}
		// A daemon that holds no lock (an older mcpi's) still owns its name.
		if st, err := Ask(dir, name, OpStatus); err == nil && st.Live() {
			lock.Close()
			return "", nil, ErrLocked
		}
		return name, lock, nil
	}
	taken := map[string]bool{}
	for {
		n := uniqueName(dir, base, taken)
		lock, err := Lock(dir, n)
		switch {
		case errors.Is(err, ErrLocked):
			// Claimed meanwhile by another start.
			taken[n] = true
			continue
		case err != nil:
			return "", nil, err
		}
		return n, lock, nil
	}
}

// uniqueName returns base, or base-2, base-3...: the first name no
// session has, running or ended, and not in taken.
func uniqueName(dir, base string, taken map[string]bool) string {
	taken = maps.Clone(taken)
	names, _ := Names(dir)
	for _, n := range names {
		taken[n] = true
	}
	if !taken[base] {
		return base
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s-%d", base, i); !taken[n] {
			return n
		}
	}
}
