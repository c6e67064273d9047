package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Formats: the host a configuration file belongs to. The format decides which
// ${...} variables Resolve expands.
const (
	FormatClaudeDesktop = "claude-desktop" // claude_desktop_config.json
	FormatClaudeCode    = "claude-code"    // .mcp.json, ~/.claude.json
	FormatVSCode        = "vscode"         // .vscode/mcp.json, the user's mcp.json, settings.json "mcp"
	FormatCursor        = "cursor"         // .cursor/mcp.json, ~/.cursor/mcp.json
	FormatInspector     = "inspector"      // the MCP Inspector's --config file
	FormatWindsurf      = "windsurf"       // ~/.codeium/windsurf/mcp_config.json
	FormatGeneric       = "mcpServers"     // any other file with an "mcpServers" object
)

// Transports, as normalised from the many spellings hosts accept.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http" // Streamable HTTP
	TransportSSE   = "sse"  // the legacy HTTP+SSE transport
)

// Server is one entry of a configuration file, as written: Load expands no
// variables (see Resolve).
type Server struct {
	Name    string
	Source  string // the file it came from
	Format  string // one of the Format constants
	Project string // for a project entry of ~/.claude.json, the project's folder

	// Transport is TransportStdio, TransportHTTP or TransportSSE, or "" for a
	// URL whose transport is to be discovered (Streamable HTTP, then SSE).
	Transport string

	Command string
	Args    []string
	Env     map[string]string // added to the inherited environment
	EnvFile string            // a dotenv file whose variables Env overrides (VS Code, Cursor)
	Cwd     string

	URL     string
	Headers map[string]string
	// OAuth is the entry's "oauth" object: how mcpi authorizes to the
	// server (nil when there is none).
	OAuth *OAuth

	Inputs   []Input // the VS Code inputs this entry references, in order of first use
	Disabled bool    // the host has it switched off ("disabled": true or "enabled": false)

	// Err is set when the entry is present but unusable (no command or URL,
	// an unknown type, a field of the wrong JSON type). Find and Resolve
	// return it, so that one bad entry does not hide the others.
	Err error
}

// OAuth is how mcpi authorizes to an HTTP server, as an entry's "oauth"
// object says: the command line's OAuth flags, by the same names in camel
// case (clientId, grant, clientSecretFile, clientAssertionKey, scopes,
// assertionFile, idTokenFile, idp, dpop, dpopKey, clientMetadataUrl,
// redirectPort; Claude Code's callbackPort is redirectPort). Secrets are
// named by file, never written in the entry; paths may be relative to the
// file, and use ${env:...} variables.
type OAuth struct {
	ClientID           string `json:"clientId"`
	Grant              string `json:"grant"`
	ClientSecretFile   string `json:"clientSecretFile"`
	ClientAssertionKey string `json:"clientAssertionKey"`
	ClientMetadataURL  string `json:"clientMetadataUrl"`
	// Issuer is the authorization server the client's secret or workload
	// JWT may go to (--oauth-issuer).
	Issuer        string   `json:"issuer"`
	Scopes        []string `json:"-"`
	AssertionFile string   `json:"assertionFile"`
	IDTokenFile   string   `json:"idTokenFile"`
	IDP           struct {
		Issuer           string `json:"issuer"`
		TokenEndpoint    string `json:"tokenEndpoint"`
		ClientID         string `json:"clientId"`
		ClientSecretFile string `json:"clientSecretFile"`
	} `json:"idp"`
	DPoP         bool   `json:"dpop"`
	DPoPKey      string `json:"dpopKey"`
	RedirectPort int    `json:"redirectPort"`
	CallbackPort int    `json:"callbackPort"`
}

// parseOAuth reads an "oauth" object.
func parseOAuth(raw json.RawMessage) (*OAuth, error) {
	if jsonKind(raw) != "object" {
		return nil, fmt.Errorf("want an object, got %s", jsonKind(raw))
	}
	var o OAuth
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, err
	}
	var extra struct {
		ClientSecret json.RawMessage `json:"clientSecret"`
		Scopes       json.RawMessage `json:"scopes"`
		Scope        json.RawMessage `json:"scope"`
	}
	_ = json.Unmarshal(raw, &extra)
	if extra.ClientSecret != nil {
		return nil, errors.New(`"clientSecret": a secret is not written in a configuration file: name a file of it (clientSecretFile), or set $MCPI_CLIENT_SECRET`)
	}
	for _, v := range []json.RawMessage{extra.Scopes, extra.Scope} {
		switch jsonKind(v) {
		case "string":
			var str string
			_ = json.Unmarshal(v, &str)
			o.Scopes = append(o.Scopes, strings.Fields(str)...)
		case "array":
			list, err := scalars(v)
			if err != nil {
				return nil, fmt.Errorf(`"scopes": %v`, err)
			}
			o.Scopes = append(o.Scopes, list...)
		}
	}
	if o.RedirectPort == 0 {
		o.RedirectPort = o.CallbackPort
	}
	return &o, nil
}

// Input is a VS Code input variable declaration ("inputs" in mcp.json),
// referenced from a server as ${input:ID}. Resolve does not prompt: the caller
// asks for the value (see MissingInputError).
type Input struct {
	ID          string
	Type        string // "promptString", "pickString" or "command"
	Description string
	Password    bool
	Default     string
	Options     []string
}

// SyntaxError reports a file that is not valid JSON (or JSONC).
type SyntaxError struct {
	Path   string
	Line   int // 1-based
	Column int // 1-based, in characters
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("config: %s:%d:%d: %s", e.Path, e.Line, e.Column, e.Msg)
}

// Load reads one configuration file. The format is detected from the file's
// name and content. A file that is empty or is only "{}" yields no servers and
// no error.
func Load(path string) ([]Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse is Load for data already read; path names the file in Server.Source
// and in errors, and takes part in detecting the format.
func Parse(path string, data []byte) ([]Server, error) {
	top, err := parseTop(path, data)
	if err != nil || top == nil {
		return nil, err
	}
	p := parser{path: path, format: formatFromPath(path)}
	sections, inputsRaw := p.sections(top)
	if len(sections) == 0 {
		if len(top) == 0 || p.format == FormatClaudeCode {
			return nil, nil
		}
		return nil, fmt.Errorf("config: %s: no \"mcpServers\" or \"servers\" object", path)
	}

	p.inputs = parseInputs(inputsRaw)
	var servers []Server
	for _, sec := range sections {
		names, raws, err := orderedObject(sec.raw)
		if err != nil {
			return nil, fmt.Errorf("config: %s: %q: %v", path, sec.key, err)
		}
		for i, name := range names {
			s := p.entry(name, raws[i])
			s.Project = sec.project
			servers = append(servers, s)
		}
	}
	if p.format == "" {
		p.format = formatFromContent(top, p.sawStreamableHTTP)
	}
	for i := range servers {
		servers[i].Format = p.format
		if modeFor(p.format).inputs {
			servers[i].Inputs = p.referencedInputs(servers[i])
		}
	}
	return servers, nil
}

// parseTop reads the file's top-level object, JSONC allowed, with the
// line and column of a syntax error. An empty file is a nil map and no
// error.
func parseTop(path string, data []byte) (map[string]json.RawMessage, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	clean, err := stripJSONC(data)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			line, col := lineCol(data, pe.off)
			return nil, &SyntaxError{Path: path, Line: line, Column: col, Msg: pe.msg}
		}
		return nil, err
	}
	if len(bytes.TrimSpace(clean)) == 0 {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(clean, &top); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			off := int(se.Offset) - 1
			if strings.Contains(se.Error(), "unexpected end") {
				off = len(bytes.TrimRight(clean, " \t\r\n"))
			}
			line, col := lineCol(data, off)
			return nil, &SyntaxError{Path: path, Line: line, Column: col, Msg: se.Error()}
		case errors.As(err, &te):
			return nil, fmt.Errorf("config: %s: the top level is %s, want an object", path, te.Value)
		}
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	if top == nil {
		return nil, fmt.Errorf("config: %s: the top level is null, want an object", path)
	}
	return top, nil
}

// sections finds the objects of servers in top, and the inputs that go
// with them; where they are may settle the format.
func (p *parser) sections(top map[string]json.RawMessage) ([]section, json.RawMessage) {
	inputsRaw := top["inputs"]
	var sections []section
	for _, key := range []string{"mcpServers", "servers"} {
		if raw, ok := top[key]; ok {
			sections = append(sections, section{key: key, raw: raw})
		}
	}
	// VS Code settings.json keeps them under "mcp".
	if raw, ok := top["mcp"]; ok && len(sections) == 0 {
		var mcp map[string]json.RawMessage
		if json.Unmarshal(raw, &mcp) == nil {
			if s, ok := mcp["servers"]; ok {
				sections = append(sections, section{key: "mcp.servers", raw: s})
				inputsRaw = mcp["inputs"]
				if p.format == "" {
					p.format = FormatVSCode
				}
			}
		}
	}
	// ~/.claude.json keeps project (local-scope) servers under projects.<dir>.
	if raw, ok := top["projects"]; ok && (p.format == "" || p.format == FormatClaudeCode) {
		var projects map[string]json.RawMessage
		if json.Unmarshal(raw, &projects) == nil {
			sections = append(sections, projectSections(projects)...)
			if p.format == "" {
				p.format = FormatClaudeCode
			}
		}
	}
	return sections, inputsRaw
}

// projectSections are the mcpServers of each project of ~/.claude.json,
// in the order of the projects' directories.
func projectSections(projects map[string]json.RawMessage) []section {
	dirs := make([]string, 0, len(projects))
	for dir := range projects {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	var sections []section
	for _, dir := range dirs {
		var proj map[string]json.RawMessage
		if json.Unmarshal(projects[dir], &proj) != nil {
			continue
		}
		if s, ok := proj["mcpServers"]; ok {
			sections = append(sections, section{key: "projects." + dir + ".mcpServers", raw: s, project: dir})
		}
	}
	return sections
}

type section struct {
	key     string
	raw     json.RawMessage
	project string
}

type parser struct {
	path              string
	format            string
	inputs            []Input
	sawStreamableHTTP bool
}

// formatFromPath recognises the file names hosts use; "" when the name says
// nothing (a plain mcp.json may be the Inspector's, or anything else).
func formatFromPath(path string) string {
	base := filepath.Base(path)
	dir := filepath.Dir(path)
	parent := filepath.Base(dir)
	switch {
	case strings.EqualFold(base, "claude_desktop_config.json"):
		return FormatClaudeDesktop
	case base == ".mcp.json" || base == ".claude.json":
		return FormatClaudeCode
	case base == "mcp_config.json" && strings.EqualFold(parent, "windsurf"):
		return FormatWindsurf
	case base == "mcp.json" && parent == ".cursor":
		return FormatCursor
	case base == "mcp.json" && parent == ".vscode",
		base == "mcp.json" && parent == "User",
		base == "mcp.json" && filepath.Base(filepath.Dir(dir)) == "profiles":
		return FormatVSCode
	}
	return ""
}

// formatFromContent guesses for a file whose name said nothing: VS Code's
// "servers", or the Inspector's "streamable-http", which no other host spells so.
func formatFromContent(top map[string]json.RawMessage, sawStreamableHTTP bool) string {
	if _, ok := top["mcpServers"]; !ok {
		if _, ok := top["servers"]; ok {
			return FormatVSCode
		}
	}
	if sawStreamableHTTP {
		return FormatInspector
	}
	return FormatGeneric
}

// entry turns one server object into a Server, recording what is wrong with
// it in Err rather than failing the file.
func (p *parser) entry(name string, raw json.RawMessage) Server {
	s := Server{Name: name, Source: p.path, Format: p.format}
	fail := func(format string, a ...any) Server {
		s.Err = fmt.Errorf("config: %s: server %q: %s", p.path, name, fmt.Sprintf(format, a...))
		return s
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return fail("want an object, got %s", jsonKind(raw))
	}

	f := &entryFields{fields: fields}
	typ := f.str("type")
	if typ == "" {
		typ = f.str("transportType") // Cline
	}
	if strings.EqualFold(typ, "streamable-http") {
		p.sawStreamableHTTP = true
	}
	s.URL = f.str("url")
	if s.URL == "" {
		s.URL = f.str("serverUrl") // Windsurf
	}
	httpURL := f.str("httpUrl") // Gemini CLI: Streamable HTTP only
	if s.URL == "" {
		s.URL = httpURL
	}
	s.Cwd = f.str("cwd")
	s.EnvFile = f.str("envFile")
	f.command(&s)
	f.maps(&s)
	f.oauthAndSwitches(&s)
	if len(f.errs) > 0 {
		return fail("%s", strings.Join(f.errs, "; "))
	}
	if msg := setTransport(&s, typ, httpURL); msg != "" {
		return fail("%s", msg)
	}
	return s
}

// entryFields reads the fields of one server object, collecting what is
// wrong with them in errs.
type entryFields struct {
	fields map[string]json.RawMessage
	errs   []string
}

// str is the string field key: "" when absent or null.
func (f *entryFields) str(key string) string {
	v, ok := f.fields[key]
	if !ok || jsonKind(v) == "null" {
		return ""
	}
	var out string
	if json.Unmarshal(v, &out) != nil {
		f.errs = append(f.errs, fmt.Sprintf("%q: want a string, got %s", key, jsonKind(v)))
	}
	return out
}

// command reads command (a string, or the whole argv as some hosts take
// it) and args.
func (f *entryFields) command(s *Server) {
	if v, ok := f.fields["command"]; ok {
		switch jsonKind(v) {
		case "string":
			_ = json.Unmarshal(v, &s.Command)
		case "array": // some hosts take the whole argv as "command"
			argv, err := scalars(v)
			if err != nil {
				f.errs = append(f.errs, fmt.Sprintf("%q: %v", "command", err))
			} else if len(argv) > 0 {
				s.Command, s.Args = argv[0], argv[1:]
			}
		case "null":
		default:
			f.errs = append(f.errs, fmt.Sprintf("%q: want a string, got %s", "command", jsonKind(v)))
		}
	}
	if v, ok := f.fields["args"]; ok && jsonKind(v) != "null" {
		args, err := scalars(v)
		if err != nil {
			f.errs = append(f.errs, fmt.Sprintf("%q: %v", "args", err))
		}
		s.Args = append(s.Args, args...)
	}
}

// maps reads env and headers.
func (f *entryFields) maps(s *Server) {
	for _, key := range []string{"env", "headers"} {
		v, ok := f.fields[key]
		if !ok || jsonKind(v) == "null" {
			continue
		}
		m, err := scalarMap(v)
		if err != nil {
			f.errs = append(f.errs, fmt.Sprintf("%q: %v", key, err))
		}
		if key == "env" {
			s.Env = m
		} else {
			s.Headers = m
		}
	}
}

// oauthAndSwitches reads oauth, and disabled or enabled.
func (f *entryFields) oauthAndSwitches(s *Server) {
	if v, ok := f.fields["oauth"]; ok && jsonKind(v) != "null" {
		o, err := parseOAuth(v)
		if err != nil {
			f.errs = append(f.errs, fmt.Sprintf("%q: %v", "oauth", err))
		}
		s.OAuth = o
	}
	if v, ok := f.fields["disabled"]; ok {
		var b bool
		if json.Unmarshal(v, &b) == nil && b {
			s.Disabled = true
		}
	}
	if v, ok := f.fields["enabled"]; ok {
		var b bool
		if json.Unmarshal(v, &b) == nil && !b {
			s.Disabled = true
		}
	}
}

// setTransport sets s.Transport from the type the entry names or, without
// one, from its fields. It returns what is wrong, or "".
func setTransport(s *Server, typ, httpURL string) string {
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case "":
		switch {
		case s.Command != "":
			s.Transport = TransportStdio
		case httpURL != "" && s.URL == httpURL:
			s.Transport = TransportHTTP
		case s.URL != "":
			s.Transport = "" // discover
		default:
			return "has neither \"command\" nor \"url\""
		}
	case "stdio":
		s.Transport = TransportStdio
	case "http", "streamable-http", "streamablehttp", "streamable_http", "streamable":
		s.Transport = TransportHTTP
	case "sse":
		s.Transport = TransportSSE
	default:
		return fmt.Sprintf("unknown type %q (want stdio, http or sse)", typ)
	}
	if s.Transport == TransportStdio && s.Command == "" {
		return fmt.Sprintf("type %q needs a \"command\"", typ)
	}
	if (s.Transport == TransportHTTP || s.Transport == TransportSSE) && s.URL == "" {
		return fmt.Sprintf("type %q needs a \"url\"", typ)
	}
	return ""
}

// referencedInputs lists the inputs s names as ${input:ID}, declared or not.
func (p *parser) referencedInputs(s Server) []Input {
	var out []Input
	seen := map[string]bool{}
	for _, str := range s.strings() {
		for _, id := range inputRefs(str) {
			if seen[id] {
				continue
			}
			seen[id] = true
			in := Input{ID: id}
			for _, d := range p.inputs {
				if d.ID == id {
					in = d
					break
				}
			}
			out = append(out, in)
		}
	}
	return out
}

// strings is every value of s that variables may appear in, in a fixed order.
func (s Server) strings() []string {
	out := []string{s.Command}
	out = append(out, s.Args...)
	for _, k := range sortedKeys(s.Env) {
		out = append(out, s.Env[k])
	}
	out = append(out, s.EnvFile, s.Cwd, s.URL)
	for _, k := range sortedKeys(s.Headers) {
		out = append(out, s.Headers[k])
	}
	if o := s.OAuth; o != nil {
		out = append(out, o.ClientID, o.ClientSecretFile, o.ClientAssertionKey, o.AssertionFile, o.IDTokenFile, o.DPoPKey,
			o.IDP.Issuer, o.IDP.TokenEndpoint, o.IDP.ClientID, o.IDP.ClientSecretFile)
	}
	return out
}

func parseInputs(raw json.RawMessage) []Input {
	var items []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var out []Input
	for _, item := range items {
		var in struct {
			ID          string            `json:"id"`
			Type        string            `json:"type"`
			Description string            `json:"description"`
			Password    bool              `json:"password"`
			Default     json.RawMessage   `json:"default"`
			Options     []json.RawMessage `json:"options"`
		}
		if json.Unmarshal(item, &in) != nil || in.ID == "" {
			continue
		}
		d := Input{ID: in.ID, Type: in.Type, Description: in.Description, Password: in.Password}
		d.Default, _ = scalar(in.Default)
		for _, o := range in.Options {
			if v, ok := scalar(o); ok {
				d.Options = append(d.Options, v)
				continue
			}
			var lv struct{ Label, Value string }
			if json.Unmarshal(o, &lv) == nil {
				if lv.Value == "" {
					lv.Value = lv.Label
				}
				d.Options = append(d.Options, lv.Value)
			}
		}
		out = append(out, d)
	}
	return out
}

// orderedObject returns an object's keys in file order, so listings follow
// the file. A repeated key keeps its first place and its last value, as
// JavaScript hosts do.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	switch jsonKind(raw) {
	case "null":
		return nil, nil, nil
	case "object":
	default:
		return nil, nil, fmt.Errorf("want an object, got %s", jsonKind(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	var keys []string
	var vals []json.RawMessage
	index := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if i, ok := index[key]; ok {
			vals[i] = v
			continue
		}
		index[key] = len(keys)
		keys = append(keys, key)
		vals = append(vals, v)
	}
	return keys, vals, nil
}

// scalar converts a JSON string, number or boolean to its text, as a
// JavaScript host would when it builds argv or an environment.
func scalar(raw json.RawMessage) (string, bool) {
	switch jsonKind(raw) {
	case "string":
		var s string
		return s, json.Unmarshal(raw, &s) == nil
	case "number", "boolean":
		return string(bytes.TrimSpace(raw)), true
	}
	return "", false
}

func scalars(raw json.RawMessage) ([]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("want an array of strings, got %s", jsonKind(raw))
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		v, ok := scalar(item)
		if !ok {
			return nil, fmt.Errorf("item %d: want a string, got %s", i, jsonKind(item))
		}
		out = append(out, v)
	}
	return out, nil
}

// scalarMap reads an object of strings; null values are left out.
func scalarMap(raw json.RawMessage) (map[string]string, error) {
	var items map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("want an object of strings, got %s", jsonKind(raw))
	}
	out := make(map[string]string, len(items))
	for _, k := range sortedKeys(items) {
		if jsonKind(items[k]) == "null" {
			continue
		}
		v, ok := scalar(items[k])
		if !ok {
			return nil, fmt.Errorf("%q: want a string, got %s", k, jsonKind(items[k]))
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
