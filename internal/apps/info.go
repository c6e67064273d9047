package apps

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// Info is what mcpi app-info says of a tool's App: its resource, how it
// reads, its security posture.
type Info struct {
	Tool        string `json:"tool"`
	ResourceURI string `json:"resourceUri"`
	// LegacyKey says the URI came from the deprecated _meta["ui/resourceUri"].
	LegacyKey  bool     `json:"legacyKey,omitempty"`
	Visibility []string `json:"visibility"`
	MIMEType   string   `json:"mimeType"`
	// Size is the HTML's length in bytes (a blob's decoded).
	Size     int    `json:"size"`
	Encoding string `json:"encoding"` // "text" or "blob"
	// Listed says resources/list names the resource (servers may leave
	// UI resources out of it).
	Listed bool `json:"listed"`
	// CSP is what the resource declares; nil when it declares none.
	CSP *CSP `json:"csp"`
	// Policy is the Content Security Policy a host applies for it.
	Policy        string          `json:"policy"`
	Domains       []DomainFinding `json:"domainFindings,omitempty"`
	Permissions   []string        `json:"permissions,omitempty"`
	Domain        string          `json:"domain,omitempty"`
	PrefersBorder *bool           `json:"prefersBorder,omitempty"`
	// Loads are the scripts and stylesheets the HTML's tags load; Undeclared
	// those from an origin the CSP does not declare.
	Loads      []Load   `json:"staticLoads"`
	Undeclared []Load   `json:"undeclaredLoads,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
	// HTML is the App's document.
	HTML string `json:"-"`
}

// Describe sums up a tool's App from the tool, the resources/read result
// of its resource and the listing's entry for it (nil when not listed).
// A resource that cannot be an App (no contents, another type, too large,
// a blob that does not decode) is an error.
func Describe(tool *mcp.Tool, read *mcp.ReadResourceResult, listed *mcp.Resource) (*Info, error) {
	ui := ToolMeta(tool.Meta)
	in := &Info{Tool: tool.Name, ResourceURI: ui.ResourceURI, LegacyKey: ui.Legacy, Visibility: ui.Visibility, Listed: listed != nil}
	if in.Visibility == nil {
		in.Visibility = []string{Model, App}
	}
	if ui.Legacy {
		in.Warnings = append(in.Warnings, `the resource is named by the deprecated _meta["ui/resourceUri"]: use _meta.ui.resourceUri (the flat key goes before the extension's GA)`)
	}
	in.Warnings = append(in.Warnings, ui.Problems...)
	if !strings.HasPrefix(ui.ResourceURI, Scheme) {
		in.Warnings = append(in.Warnings, fmt.Sprintf("the resource URI %q is not a ui:// URI", ui.ResourceURI))
	}
	var c *mcp.ResourceContents
	for i := range read.Contents {
		if read.Contents[i].URI == ui.ResourceURI || c == nil {
			c = &read.Contents[i]
		}
	}
	if c == nil {
		return nil, fmt.Errorf("resources/read of %s returned no contents", ui.ResourceURI)
	}
	in.MIMEType = c.MimeType
	switch {
	case c.Text != nil:
		if len(*c.Text) > MaxResource {
			return nil, fmt.Errorf("the App's resource is %d bytes: mcpi reads at most %d", len(*c.Text), MaxResource)
		}
		in.HTML, in.Encoding = *c.Text, "text"
	case c.Blob != nil:
		if len(*c.Blob) > MaxResource*4/3+4 {
			return nil, fmt.Errorf("the App's resource is %d base64 bytes: mcpi reads at most %d bytes", len(*c.Blob), MaxResource)
		}
		b, err := base64.StdEncoding.DecodeString(*c.Blob)
		if err != nil {
			return nil, fmt.Errorf("the App's resource is a blob that is not base64: %v", err)
		}
		in.HTML, in.Encoding = string(b), "blob"
	default:
		return nil, fmt.Errorf("the App's resource %s has neither text nor blob", ui.ResourceURI)
	}
	in.Size = len(in.HTML)
	if c.MimeType != MIMEType {
		in.Warnings = append(in.Warnings, fmt.Sprintf("the resource's MIME type is %q: an App's is %q", c.MimeType, MIMEType))
	}
	// The contents' _meta.ui, else the listing's.
	res, problems := ResourceMeta(c.Meta)
	if res == (Resource{}) && listed != nil {
		res, problems = ResourceMeta(listed.Meta)
	}
	in.Warnings = append(in.Warnings, problems...)
	in.CSP, in.Domain, in.PrefersBorder = res.CSP, res.Domain, res.PrefersBorder
	if res.Permissions != nil {
		in.Permissions = res.Permissions.List()
	}
	in.Policy = res.CSP.Policy()
	// No CSP is the restrictive default (SEP-1865), no fault: the
	// report's csp line says it.
	in.Domains = res.CSP.Findings()
	in.Loads = StaticLoads(in.HTML)
	if in.Loads == nil {
		in.Loads = []Load{}
	}
	for _, l := range in.Loads {
		if l.Origin != "" && !res.CSP.Allowed(l.Origin) {
			in.Undeclared = append(in.Undeclared, l)
		}
	}
	return in, nil
}

// VisibleTo is the tool's visibility for a person: "model, app" by
// default, "nobody" for an empty one.
func (in *Info) VisibleTo() string { return Tool{Visibility: in.Visibility}.VisibilityText() }

// JSON is the info as one JSON document.
func (in *Info) JSON() ([]byte, error) { return json.MarshalIndent(in, "", "  ") }
