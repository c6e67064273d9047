// Package apps reads what a server says of its MCP Apps (SEP-1865, the
// io.modelcontextprotocol/ui extension, stable 2026-01-26): a tool's
// _meta.ui (the App's ui:// resource and who may see the tool), a UI
// resource's _meta.ui (its Content Security Policy, permissions, domain,
// border), the CSP a host builds from it, and the scripts and stylesheets
// an App's HTML loads statically. It speaks to no server and no browser:
// the CLI, the check and the host page use it.
package apps

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Extension is the extension's identifier in capabilities.extensions.
const Extension = "io.modelcontextprotocol/ui"

// MIMEType is the type of an App's HTML resource.
const MIMEType = "text/html;profile=mcp-app"

// LegacyURIKey is the flat _meta key of the App's resource that the
// specification deprecates for _meta.ui.resourceUri.
const LegacyURIKey = "ui/resourceUri"

// Scheme is the URI scheme of UI resources.
const Scheme = "ui://"

// Protocol is the revision of the App↔host protocol mcpi's host speaks.
const Protocol = "2026-01-26"

// MaxResource bounds the UI resource mcpi reads (text or blob, as
// received): past it the resource is refused.
const MaxResource = 4 << 20

// Declaration is what a client puts under capabilities.extensions to say
// it renders Apps.
func Declaration() json.RawMessage {
	return json.RawMessage(`{"mimeTypes":["` + MIMEType + `"]}`)
}

// Visibility values.
const (
	Model = "model"
	App   = "app"
)

// Tool is what a tool's _meta says of its App.
type Tool struct {
	// ResourceURI is the App's resource; empty when the tool has none.
	ResourceURI string `json:"resourceUri,omitempty"`
	// Visibility is as given; nil means the default, both.
	Visibility []string `json:"visibility,omitempty"`
	// Legacy says the URI came from the deprecated flat key.
	Legacy bool `json:"legacy,omitempty"`
	// BadVisibility says _meta.ui.visibility is there and does not read
	// as an array of strings: a host grants nothing on it.
	BadVisibility bool `json:"badVisibility,omitempty"`
	// Problems are what is malformed in the metadata.
	Problems []string `json:"problems,omitempty"`
}

// HasApp says the tool names an App's resource.
func (t Tool) HasApp() bool { return t.ResourceURI != "" }

// Visible says whether the tool is visible to "model" or "app".
func (t Tool) Visible(to string) bool {
	return t.Visibility == nil || slices.Contains(t.Visibility, to)
}

// AppOnly says the tool is for its App alone: hidden from the model.
func (t Tool) AppOnly() bool { return !t.Visible(Model) }

// VisibilityText is the visibility for a person: "model, app" by default.
func (t Tool) VisibilityText() string {
	if t.Visibility == nil {
		return "model, app"
	}
	if len(t.Visibility) == 0 {
		return "nobody"
	}
	return strings.Join(t.Visibility, ", ")
}

// ToolMeta reads a tool's _meta. A tool with no App metadata gives the
// zero Tool; a tool with _meta.ui but no resourceUri (an App-only tool of
// another tool's App) gives its visibility.
func ToolMeta(meta json.RawMessage) Tool {
	var t Tool
	if len(meta) == 0 {
		return t
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return t
	}
	if raw, ok := m["ui"]; ok {
		var ui struct {
			ResourceURI json.RawMessage `json:"resourceUri"`
			Visibility  json.RawMessage `json:"visibility"`
		}
		if err := json.Unmarshal(raw, &ui); err != nil {
			t.Problems = append(t.Problems, "_meta.ui is not an object")
		} else {
			if len(ui.ResourceURI) > 0 && json.Unmarshal(ui.ResourceURI, &t.ResourceURI) != nil {
				t.Problems = append(t.Problems, "_meta.ui.resourceUri is not a string")
			}
			if len(ui.Visibility) > 0 && string(ui.Visibility) != "null" {
				t.Visibility = []string{}
				if json.Unmarshal(ui.Visibility, &t.Visibility) != nil {
					t.Problems = append(t.Problems, "_meta.ui.visibility is not an array of strings")
					t.Visibility, t.BadVisibility = nil, true
				}
				for _, v := range t.Visibility {
					if v != Model && v != App {
						t.Problems = append(t.Problems, fmt.Sprintf("_meta.ui.visibility holds %q: the values are \"model\" and \"app\"", v))
					}
				}
				if t.Visibility != nil && len(t.Visibility) == 0 {
					t.Problems = append(t.Problems, "_meta.ui.visibility is empty: neither the model nor an App may call the tool")
				}
			}
		}
	}
	if raw, ok := m[LegacyURIKey]; ok && t.ResourceURI == "" {
		if json.Unmarshal(raw, &t.ResourceURI) == nil && t.ResourceURI != "" {
			t.Legacy = true
		}
	}
	return t
}

// CSP is what a UI resource declares of the origins its App reaches.
type CSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	FrameDomains    []string `json:"frameDomains,omitempty"`
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
}

// Permissions are the browser features a UI resource asks for.
type Permissions struct {
	Camera         *struct{} `json:"camera,omitempty"`
	Microphone     *struct{} `json:"microphone,omitempty"`
	Geolocation    *struct{} `json:"geolocation,omitempty"`
	ClipboardWrite *struct{} `json:"clipboardWrite,omitempty"`
}

// List names the permissions asked for.
func (p Permissions) List() []string {
	var out []string
	for _, f := range []struct {
		on   bool
		name string
	}{{p.Camera != nil, "camera"}, {p.Microphone != nil, "microphone"}, {p.Geolocation != nil, "geolocation"}, {p.ClipboardWrite != nil, "clipboard-write"}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return out
}

// Resource is what a UI resource's _meta.ui says.
type Resource struct {
	CSP           *CSP         `json:"csp,omitempty"`
	Permissions   *Permissions `json:"permissions,omitempty"`
	Domain        string       `json:"domain,omitempty"`
	PrefersBorder *bool        `json:"prefersBorder,omitempty"`
}

// ResourceMeta reads a UI resource's _meta (of its listing or of its
// contents). A _meta.ui that does not parse is a problem, and the zero
// Resource.
func ResourceMeta(meta json.RawMessage) (Resource, []string) {
	var r Resource
	if len(meta) == 0 {
		return r, nil
	}
	var m struct {
		UI json.RawMessage `json:"ui"`
	}
	if json.Unmarshal(meta, &m) != nil || len(m.UI) == 0 {
		return r, nil
	}
	if err := json.Unmarshal(m.UI, &r); err != nil {
		return Resource{}, []string{"_meta.ui does not parse: " + err.Error()}
	}
	return r, nil
}

// defaultCSP is the policy a host must use when a resource declares none.
const defaultCSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'"

// Policy is the Content Security Policy a host builds from the declared
// domains, as the specification writes it; the restrictive default when
// none is declared. Domains that could break out of the policy (a
// character that ends a directive or a source) are left out.
func (c *CSP) Policy() string {
	if c == nil {
		return defaultCSP + "; frame-src 'none'; object-src 'none'; base-uri 'self'"
	}
	res := sources(c.ResourceDomains)
	or := func(list []string, none string) string {
		if s := sources(list); s != "" {
			return s
		}
		return none
	}
	parts := []string{
		"default-src 'none'",
		join("script-src 'self' 'unsafe-inline'", res),
		join("style-src 'self' 'unsafe-inline'", res),
		join("connect-src 'self'", sources(c.ConnectDomains)),
		join("img-src 'self' data:", res),
		join("font-src 'self'", res),
		join("media-src 'self' data:", res),
		"frame-src " + or(c.FrameDomains, "'none'"),
		"object-src 'none'",
		"base-uri " + or(c.BaseURIDomains, "'self'"),
	}
	return strings.Join(parts, "; ")
}

func join(head, tail string) string {
	if tail == "" {
		return head
	}
	return head + " " + tail
}

// sources joins the domains that are safe to put in a policy.
func sources(domains []string) string {
	var out []string
	for _, d := range domains {
		if d != "" && !strings.ContainsAny(d, "; ,'\"\t\r\n\x00") && safeASCII(d) {
			out = append(out, d)
		}
	}
	return strings.Join(out, " ")
}

func safeASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// DomainFinding is what is wrong or risky with one declared domain.
type DomainFinding struct {
	Field  string `json:"field"`
	Domain string `json:"domain"`
	// Severity is "error" (not a CSP source, or one that would break the
	// policy) or "warning" (allowed, and too wide).
	Severity string `json:"severity"`
	Why      string `json:"why"`
}

// Findings judges each declared domain: a CSP host source
// (scheme://host[:port], a leading *. allowed), with `*` and plain
// http: called out.
func (c *CSP) Findings() []DomainFinding {
	if c == nil {
		return nil
	}
	var out []DomainFinding
	for _, f := range []struct {
		name string
		list []string
	}{{"connectDomains", c.ConnectDomains}, {"resourceDomains", c.ResourceDomains}, {"frameDomains", c.FrameDomains}, {"baseUriDomains", c.BaseURIDomains}} {
		for _, d := range f.list {
			if sev, why := judge(d); why != "" {
				out = append(out, DomainFinding{Field: f.name, Domain: d, Severity: sev, Why: why})
			}
		}
	}
	return out
}

func judge(d string) (severity, why string) {
	switch {
	case d == "":
		return "error", "an empty domain"
	case !safeASCII(d) || strings.ContainsAny(d, ";,'\""):
		return "error", "holds a character that ends a CSP source or directive: left out of the policy"
	case d == "*" || d == "https:" || d == "http:" || d == "*://*":
		return "warning", "allows every origin: the App may reach anywhere, which the CSP is there to prevent"
	}
	u, err := url.Parse(d)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "wss" && u.Scheme != "ws") {
		return "error", "not an origin (scheme://host[:port]): hosts read it differently or not at all"
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "error", "an origin has no path, query, fragment or credentials"
	}
	host := u.Hostname()
	if strings.Contains(strings.TrimPrefix(host, "*."), "*") {
		return "error", "a wildcard is allowed only as the leftmost label (https://*.example.com)"
	}
	if u.Scheme == "http" || u.Scheme == "ws" {
		if host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1" {
			return "", ""
		}
		return "warning", "plain " + u.Scheme + ": what the App loads or sends can be read and changed on the way"
	}
	return "", ""
}
