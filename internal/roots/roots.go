// Package roots decides what a root a person typed (the TUI's Roots pane,
// the CLI's --root) becomes: the one rule for both front ends; and what a
// set, add or remove of them (mcpi roots) makes of a session's roots.
//
// It imports only internal/mcp and internal/safetext of mcpi.
package roots

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// scheme matches a URI scheme at the start of an entry; one letter is a
// Windows drive, not a scheme.
var scheme = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]+):`)

// Parse turns an entry into a root. A path (relative, absolute, or starting
// with ~) must exist and becomes the percent-encoded file:// URI of its
// absolute form, named after its last element. A file:// URI must parse,
// name an absolute local path, and that path must exist; it is given back
// in the same encoding. Any other scheme is refused: MCP roots are file://
// URIs. Parse reads the file system, so a TUI runs it in a Cmd. Its errors
// quote the entry sanitised.
func Parse(entry string) (mcp.Root, error) { return ParseIn(entry, "") }

// ParseIn is Parse with a relative path taken relative to dir (the
// process's working directory when dir is "").
func ParseIn(entry, dir string) (mcp.Root, error) {
	s := strings.TrimSpace(entry)
	if s == "" {
		return mcp.Root{}, errors.New("an empty root: type a directory or a file:// URI")
	}
	if m := scheme.FindStringSubmatch(s); m != nil {
		if !strings.EqualFold(m[1], "file") {
			return mcp.Root{}, fmt.Errorf("root %s: roots are paths or file:// URIs, not %s URIs", shown(entry), m[1])
		}
		u, err := url.Parse(s)
		if err != nil {
			return mcp.Root{}, fmt.Errorf("root %s is not a valid file URI: %s", shown(entry), shown(unwrapURLError(err)))
		}
		switch {
		case u.Host != "" && !strings.EqualFold(u.Host, "localhost"):
			return mcp.Root{}, fmt.Errorf("root %s: a file URI names a local path (file:///path), not one on host %s", shown(entry), shown(u.Host))
		case u.Opaque != "" || !strings.HasPrefix(u.Path, "/"):
			return mcp.Root{}, fmt.Errorf("root %s: a file URI needs an absolute path, like file:///home/me/project", shown(entry))
		case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
			return mcp.Root{}, fmt.Errorf("root %s: a file URI of a root has no user, query or fragment", shown(entry))
		}
		return fromPath(entry, filepath.FromSlash(u.Path))
	}
	path := s
	if path == "~" || strings.HasPrefix(path, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return mcp.Root{}, fmt.Errorf("root %s: %s", shown(entry), shown(err.Error()))
		}
		path = filepath.Join(home, path[1:])
	}
	if dir != "" && !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return mcp.Root{}, fmt.Errorf("root %s: %s", shown(entry), shown(err.Error()))
	}
	return fromPath(entry, abs)
}

func fromPath(entry, abs string) (mcp.Root, error) {
	abs = filepath.Clean(abs)
	if _, err := os.Stat(abs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return mcp.Root{}, fmt.Errorf("root %s: %s does not exist", shown(entry), shown(abs))
		}
		return mcp.Root{}, fmt.Errorf("root %s: %s", shown(entry), shown(err.Error()))
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	name := filepath.Base(abs)
	if name == string(filepath.Separator) {
		name = ""
	}
	return mcp.Root{URI: u.String(), Name: name}, nil
}

func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// shown is text quoted for a message, its control and invisible characters
// made visible.
func shown(s string) string { return `"` + safetext.Sanitize(s, false) + `"` }

// Change applies op (set, add or remove) of entries to the roots cur, and
// returns the roots that result; an entry is parsed as ParseIn parses it
// in dir. Adding a root that is one already, or removing one that is
// not, is an error.
func Change(op string, cur []mcp.Root, entries []string, dir string) ([]mcp.Root, error) {
	switch op {
	case "set", "add":
		next := []mcp.Root{}
		if op == "add" {
			next = append(next, cur...)
		}
		for _, e := range entries {
			r, err := ParseIn(e, dir)
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(next, func(x mcp.Root) bool { return x.URI == r.URI }) {
				if op == "add" {
					return nil, fmt.Errorf("%s is a root already", r.URI)
				}
				continue
			}
			next = append(next, r)
		}
		return next, nil
	}
	next := slices.Clone(cur)
	for _, e := range entries {
		uri := e
		if r, err := ParseIn(e, dir); err == nil {
			uri = r.URI
		}
		i := slices.IndexFunc(next, func(x mcp.Root) bool { return x.URI == uri || x.URI == e })
		if i < 0 {
			return nil, fmt.Errorf("%s is not one of the session's roots", safetext.Sanitize(e, false))
		}
		next = slices.Delete(next, i, i+1)
	}
	return next, nil
}
