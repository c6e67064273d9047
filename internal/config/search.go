package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
)

// SearchOptions says where Search looks. Every field has a default taken from
// the running process, so tests can build a fake home and work directory.
type SearchOptions struct {
	Home      string              // "" = $HOME ($USERPROFILE on Windows)
	ConfigDir string              // "" = $XDG_CONFIG_HOME or ~/.config; ~/Library/Application Support on macOS; %APPDATA% on Windows
	WorkDir   string              // "" = the current directory
	GOOS      string              // "" = runtime.GOOS
	Env       func(string) string // nil = os.Getenv
}

// Problem is a configuration file Search found but could not use.
type Problem struct {
	Path string
	Err  error // names the file too
}

func (p Problem) String() string { return p.Err.Error() }

// Locations lists the files Search reads, in order: project files in the
// work directory and each of its parents (.mcp.json, .vscode/mcp.json,
// .cursor/mcp.json), then the user's Claude Code, Cursor, VS Code (stable and
// Insiders), Claude Desktop and Windsurf files. Most of them will not exist.
func Locations(opts SearchOptions) []string {
	o := opts.withDefaults()
	var paths []string
	if o.WorkDir != "" {
		for dir := filepath.Clean(o.WorkDir); ; {
			paths = append(paths,
				filepath.Join(dir, ".mcp.json"),
				filepath.Join(dir, ".vscode", "mcp.json"),
				filepath.Join(dir, ".cursor", "mcp.json"))
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if dir := o.Env("CLAUDE_CONFIG_DIR"); dir != "" {
		paths = append(paths, filepath.Join(dir, ".claude.json"))
	} else if o.Home != "" {
		paths = append(paths, filepath.Join(o.Home, ".claude.json"))
	}
	if o.Home != "" {
		paths = append(paths, filepath.Join(o.Home, ".cursor", "mcp.json"))
	}
	if o.ConfigDir != "" {
		paths = append(paths,
			filepath.Join(o.ConfigDir, "Code", "User", "mcp.json"),
			filepath.Join(o.ConfigDir, "Code - Insiders", "User", "mcp.json"),
			filepath.Join(o.ConfigDir, "Claude", "claude_desktop_config.json"))
	}
	if o.Home != "" {
		paths = append(paths, filepath.Join(o.Home, ".codeium", "windsurf", "mcp_config.json"))
	}

	seen := map[string]bool{}
	out := paths[:0]
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Search reads every file of Locations that exists. Files that cannot be read
// or parsed are reported as Problems and skipped; the servers of the others
// are returned in Locations order. Of the project entries of ~/.claude.json,
// only those of the work directory and its parents are kept, nearest first.
func Search(opts SearchOptions) ([]Server, []Problem) {
	o := opts.withDefaults()
	var servers []Server
	var problems []Problem
	for _, path := range Locations(o) {
		found, err := Load(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				continue
			}
			problems = append(problems, Problem{Path: path, Err: err})
			continue
		}
		if filepath.Base(path) == ".claude.json" {
			found = projectServers(found, o.WorkDir, o.GOOS == "windows")
		}
		servers = append(servers, found...)
	}
	return servers, problems
}

// projectServers keeps the user-scope entries of ~/.claude.json and the
// project entries of workDir and its parents, nearest project first.
func projectServers(servers []Server, workDir string, foldCase bool) []Server {
	norm := func(p string) string {
		p = filepath.ToSlash(filepath.Clean(p))
		if foldCase {
			p = strings.ToLower(p)
		}
		return strings.TrimSuffix(p, "/")
	}
	wd := norm(workDir)
	kept := servers[:0]
	for _, s := range servers {
		if s.Project != "" {
			p := norm(s.Project)
			if workDir == "" || (wd != p && !strings.HasPrefix(wd, p+"/") && p != "") {
				continue
			}
		}
		kept = append(kept, s)
	}
	sort.SliceStable(kept, func(i, j int) bool {
		pi, pj := kept[i].Project, kept[j].Project
		if (pi == "") != (pj == "") {
			return pi != ""
		}
		return len(pi) > len(pj)
	})
	return kept
}

func (opts SearchOptions) withDefaults() SearchOptions {
	o := opts
	if o.Env == nil {
		o.Env = os.Getenv
	}
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	if o.Home == "" {
		if o.GOOS == "windows" {
			o.Home = o.Env("USERPROFILE")
		}
		if o.Home == "" {
			o.Home = o.Env("HOME")
		}
	}
	if o.ConfigDir == "" {
		switch o.GOOS {
		case "windows":
			o.ConfigDir = o.Env("APPDATA")
		case "darwin", "ios":
			if o.Home != "" {
				o.ConfigDir = filepath.Join(o.Home, "Library", "Application Support")
			}
		default:
			if dir := o.Env("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
				o.ConfigDir = dir
			} else if o.Home != "" {
				o.ConfigDir = filepath.Join(o.Home, ".config")
			}
		}
	}
	if o.WorkDir == "" {
		if wd, err := os.Getwd(); err == nil {
			o.WorkDir = wd
		}
	} else if abs, err := filepath.Abs(o.WorkDir); err == nil {
		o.WorkDir = abs
	}
	return o
}
