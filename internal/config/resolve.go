package config

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MissingInputError is returned by Resolve when a server references VS Code
// inputs (${input:ID}) that were not given. The caller can prompt for them
// (Inputs carries descriptions, defaults, options and which are passwords)
// and call Resolve again.
type MissingInputError struct {
	Server string
	Source string
	IDs    []string
	Inputs []Input // one per ID; only the ID is set for an undeclared input
}

func (e *MissingInputError) Error() string {
	return fmt.Sprintf("config: %s: server %q needs a value for input %s",
		e.Source, e.Server, strings.Join(e.IDs, ", "))
}

// Resolve returns s with the variables expanded that the host owning its file
// would expand, in command, args, env and header values, envFile, cwd and url:
//
//   - Claude Code: ${VAR} and ${VAR:-default}; an unset VAR without a default
//     is an error.
//   - VS Code, Cursor, Windsurf: ${env:VAR} (empty if unset), ${userHome},
//     ${workspaceFolder}, ${workspaceFolderBasename}, ${pathSeparator}, ${/};
//     VS Code also ${input:ID}, from inputs. Other VS Code variables
//     (${config:...}, ${command:...}) are left as written.
//   - A generic mcpServers file: all of the above.
//   - Claude Desktop and the Inspector expand nothing.
//
// lookupEnv is typically os.LookupEnv; nil means an empty environment.
// workspace is the folder ${workspaceFolder} names when the file does not
// belong to a project itself (a project file's folder always wins: the parent
// of .vscode or .cursor, the folder of .mcp.json, the project of a
// ~/.claude.json entry). A relative cwd or envFile is taken from that folder,
// or from the file's own folder when there is none.
//
// If envFile is set, the file is read and its variables are merged under Env
// (Env wins). Missing ${input:...} values give a *MissingInputError. Resolve
// returns s.Err if the entry is unusable.
func (s Server) Resolve(inputs map[string]string, lookupEnv func(string) (string, bool), workspace string) (Server, error) {
	if s.Err != nil {
		return Server{}, s.Err
	}
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	if ws := s.workspace(homeDir(lookupEnv)); ws != "" {
		workspace = ws
	}
	x := &expander{mode: modeFor(s.Format), inputs: inputs, lookup: lookupEnv, workspace: workspace}
	r, oauthFiles := x.expandServer(s)
	if err := x.unresolved(s); err != nil {
		return Server{}, err
	}
	base := workspace
	if base == "" {
		base = filepath.Dir(s.Source)
	}
	if err := r.anchorFiles(base, oauthFiles); err != nil {
		return Server{}, err
	}
	return r, nil
}

// expandServer is s with its variables expanded, and the OAuth fields of
// the copy that name files.
func (x *expander) expandServer(s Server) (Server, []*string) {
	r := s
	r.Command = x.expand(s.Command)
	r.Args = nil
	for _, a := range s.Args {
		r.Args = append(r.Args, x.expand(a))
	}
	r.Env = x.expandMap(s.Env)
	r.EnvFile = x.expand(s.EnvFile)
	r.Cwd = x.expand(s.Cwd)
	r.URL = x.expand(s.URL)
	r.Headers = x.expandMap(s.Headers)
	r.Inputs = slices.Clone(s.Inputs)
	var oauthFiles []*string
	if s.OAuth != nil {
		o := *s.OAuth
		o.Scopes = slices.Clone(s.OAuth.Scopes)
		for _, f := range []*string{&o.ClientID, &o.ClientMetadataURL, &o.IDP.Issuer, &o.IDP.TokenEndpoint, &o.IDP.ClientID} {
			*f = x.expand(*f)
		}
		oauthFiles = []*string{&o.ClientSecretFile, &o.ClientAssertionKey, &o.AssertionFile, &o.IDTokenFile, &o.DPoPKey, &o.IDP.ClientSecretFile}
		for _, f := range oauthFiles {
			*f = x.expand(*f)
		}
		r.OAuth = &o
	}
	return r, oauthFiles
}

// unresolved is the error for what the expansion of s could not fill in:
// inputs not given, environment variables unset, no workspace folder.
func (x *expander) unresolved(s Server) error {
	if len(x.missingInputs) > 0 {
		e := &MissingInputError{Server: s.Name, Source: s.Source, IDs: x.missingInputs}
		for _, id := range x.missingInputs {
			in := Input{ID: id}
			for _, d := range s.Inputs {
				if d.ID == id {
					in = d
				}
			}
			e.Inputs = append(e.Inputs, in)
		}
		return e
	}
	if len(x.missingEnv) > 0 {
		return fmt.Errorf("config: %s: server %q: environment variable %s is not set and has no default",
			s.Source, s.Name, strings.Join(x.missingEnv, ", "))
	}
	if x.noWorkspace {
		return fmt.Errorf("config: %s: server %q uses ${workspaceFolder}, but no workspace folder is known", s.Source, s.Name)
	}
	return nil
}

// anchorFiles makes the relative cwd and envFile of r relative to base,
// and its OAuth files relative to its configuration file; it then reads
// envFile, whose variables go under Env (Env wins).
func (r *Server) anchorFiles(base string, oauthFiles []*string) error {
	if r.Cwd != "" && !filepath.IsAbs(r.Cwd) {
		r.Cwd = filepath.Join(base, r.Cwd)
	}
	// An OAuth file is named relative to the configuration file: the
	// secrets are kept beside it, whatever folder mcpi runs in.
	for _, f := range oauthFiles {
		if *f != "" && !filepath.IsAbs(*f) {
			*f = filepath.Join(filepath.Dir(r.Source), *f)
		}
	}
	if r.EnvFile != "" {
		if !filepath.IsAbs(r.EnvFile) {
			r.EnvFile = filepath.Join(base, r.EnvFile)
		}
		vars, err := readEnvFile(r.EnvFile)
		if err != nil {
			return fmt.Errorf("config: %s: server %q: envFile: %w", r.Source, r.Name, err)
		}
		maps.Copy(vars, r.Env)
		r.Env = vars
	}
	return nil
}

// workspace is the project folder s's file belongs to, if any.
func (s Server) workspace(home string) string {
	if s.Project != "" {
		return s.Project
	}
	if s.Source == "" {
		return ""
	}
	dir := filepath.Dir(s.Source)
	switch {
	case filepath.Base(s.Source) == ".mcp.json":
		return absOr(dir)
	case filepath.Base(dir) == ".vscode" && s.Format == FormatVSCode,
		filepath.Base(dir) == ".cursor" && s.Format == FormatCursor:
		parent := filepath.Dir(dir)
		// ~/.cursor/mcp.json is the user's, not a project's.
		if home != "" && absOr(parent) == absOr(home) {
			return ""
		}
		return absOr(parent)
	}
	return ""
}

func absOr(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

func homeDir(lookupEnv func(string) (string, bool)) string {
	for _, name := range []string{"HOME", "USERPROFILE"} {
		if v, ok := lookupEnv(name); ok && v != "" {
			return v
		}
	}
	return ""
}

type expandMode struct{ shell, vscode, inputs bool }

func modeFor(format string) expandMode {
	switch format {
	case FormatClaudeCode:
		return expandMode{shell: true}
	case FormatVSCode:
		return expandMode{vscode: true, inputs: true}
	case FormatCursor, FormatWindsurf:
		return expandMode{vscode: true}
	case FormatGeneric:
		return expandMode{shell: true, vscode: true, inputs: true}
	}
	return expandMode{}
}

type expander struct {
	mode      expandMode
	inputs    map[string]string
	lookup    func(string) (string, bool)
	workspace string

	missingInputs []string
	missingEnv    []string
	noWorkspace   bool
}

func (x *expander) expandMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		out[k] = x.expand(m[k])
	}
	return out
}

// expand replaces each ${...} it knows in one pass; values substituted are
// not expanded again, and what it does not know is left as written.
func (x *expander) expand(s string) string {
	if x.mode == (expandMode{}) || !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		body := s[i+2 : i+2+j]
		if v, ok := x.variable(body); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+3+j])
		}
		s = s[i+3+j:]
	}
	b.WriteString(s)
	return b.String()
}

func (x *expander) variable(body string) (string, bool) {
	if x.mode.vscode {
		switch body {
		case "workspaceFolder", "workspaceRoot", "workspaceFolderBasename":
			if x.workspace == "" {
				x.noWorkspace = true
				return "", false
			}
			if body == "workspaceFolderBasename" {
				return filepath.Base(x.workspace), true
			}
			return x.workspace, true
		case "userHome":
			home := homeDir(x.lookup)
			return home, home != ""
		case "pathSeparator", "/":
			return string(filepath.Separator), true
		}
		if name, ok := strings.CutPrefix(body, "env:"); ok {
			v, _ := x.lookup(name)
			return v, true
		}
	}
	if x.mode.inputs {
		if id, ok := strings.CutPrefix(body, "input:"); ok {
			if v, ok := x.inputs[id]; ok {
				return v, true
			}
			if !slices.Contains(x.missingInputs, id) {
				x.missingInputs = append(x.missingInputs, id)
			}
			return "", false
		}
	}
	if x.mode.shell {
		name, def, hasDef := strings.Cut(body, ":-")
		if !isEnvName(name) {
			return "", false
		}
		v, set := x.lookup(name)
		switch {
		case set && v != "":
			return v, true
		case hasDef:
			return def, true
		case set:
			return "", true
		}
		if !slices.Contains(x.missingEnv, name) {
			x.missingEnv = append(x.missingEnv, name)
		}
		return "", false
	}
	return "", false
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case i > 0 && '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return true
}

// readEnvFile reads a dotenv file: KEY=VALUE lines, optional "export ",
// # comments, and single- or double-quoted values (the latter with \n, \t,
// \" and \\ escapes). Lines it cannot read are skipped, as dotenv does.
func readEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !isEnvName(key) {
			continue
		}
		val = strings.TrimSpace(val)
		switch {
		case len(val) >= 2 && val[0] == '"' && strings.LastIndexByte(val, '"') > 0:
			val = val[1:strings.LastIndexByte(val, '"')]
			if u, err := strconv.Unquote(`"` + val + `"`); err == nil {
				val = u
			}
		case len(val) >= 2 && val[0] == '\'' && strings.LastIndexByte(val, '\'') > 0:
			val = val[1:strings.LastIndexByte(val, '\'')]
		default:
			if i := strings.Index(val, " #"); i >= 0 {
				val = strings.TrimSpace(val[:i])
			}
		}
		vars[key] = val
	}
	return vars, sc.Err()
}

// inputRefs lists the IDs of the ${input:ID} references in s.
func inputRefs(s string) []string {
	var ids []string
	for {
		i := strings.Index(s, "${input:")
		if i < 0 {
			return ids
		}
		s = s[i+len("${input:"):]
		j := strings.IndexByte(s, '}')
		if j < 0 {
			return ids
		}
		ids = append(ids, s[:j])
		s = s[j+1:]
	}
}
