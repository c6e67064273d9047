package check

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// maxReads bounds how many listed resources are read.
const maxReads = 50

func (r *run) resources() {
	caps := r.c.ServerCapabilities()
	items, ok := r.feature("resources", "resources/list", "resources", caps.Resources != nil)
	if !ok {
		return
	}
	r.check(ruleResourcesReadable, ruleResourcesMimeType)
	var uris []string
	for i, raw := range items {
		var res mcp.Resource
		if err := json.Unmarshal(raw, &res); err != nil || res.URI == "" {
			r.report(ruleResourcesReadable, "resources/list", raw, "an item is not a Resource with a uri")
			continue
		}
		uris = append(uris, res.URI)
		subject := "resource " + res.URI
		r.hiddenText(subject, nil, map[string]string{"uri": res.URI, "name": res.Name, "title": res.Title, "description": res.Description})
		r.icons(subject, res.Icons)
		if i < maxReads {
			r.read(subject, res)
		}
	}
	r.duplicates("resources/list", "resource", uris)
	r.templates()
}

func (r *run) read(subject string, res mcp.Resource) {
	raw, err := r.probe("resources/read", mcp.ReadResourceParams{URI: res.URI})
	if err != nil {
		r.report(ruleResourcesReadable, subject, nil, "it is listed but resources/read failed: %v", err)
		return
	}
	var rr mcp.ReadResourceResult
	if err := json.Unmarshal(raw, &rr); err != nil {
		r.report(ruleResourcesReadable, subject, clipRaw(raw), "the result is not a ReadResourceResult: %v", err)
		return
	}
	if len(rr.Contents) == 0 {
		r.report(ruleResourcesReadable, subject, clipRaw(raw), "resources/read returned no contents")
	}
	for _, c := range rr.Contents {
		switch {
		case c.Text != nil && c.Blob != nil:
			r.report(ruleResourcesReadable, subject, nil, "a content (%s) has both text and blob", c.URI)
		case c.Text == nil && c.Blob == nil:
			r.report(ruleResourcesReadable, subject, nil, "a content (%s) has neither text nor blob", c.URI)
		case c.Blob != nil:
			if _, err := base64.StdEncoding.DecodeString(*c.Blob); err != nil {
				r.report(ruleResourcesReadable, subject, nil, "the blob of %s is not base64: %v", c.URI, err)
			}
		}
		if res.MimeType != "" && c.MimeType != "" && c.URI == res.URI && !sameMime(res.MimeType, c.MimeType) {
			r.report(ruleResourcesMimeType, subject, nil, "listed as %s, read as %s", res.MimeType, c.MimeType)
		}
	}
}

func sameMime(a, b string) bool {
	base := func(s string) string {
		s, _, _ = strings.Cut(s, ";")
		return strings.ToLower(strings.TrimSpace(s))
	}
	return base(a) == base(b)
}

func (r *run) templates() {
	items, err := r.list("resources/templates/list", "resourceTemplates")
	if err != nil {
		if code, ok := rpcCode(err); !ok || code != mcp.CodeMethodNotFound {
			r.report(ruleCapabilitiesDeclaredWorks, "resource templates", nil, "the server declares resources but resources/templates/list failed: %v", err)
		}
		return
	}
	r.check(ruleResourcesTemplate)
	for _, raw := range items {
		var t mcp.ResourceTemplate
		if err := json.Unmarshal(raw, &t); err != nil {
			r.report(ruleResourcesTemplate, "resources/templates/list", raw, "an item is not a ResourceTemplate")
			continue
		}
		subject := "template " + t.URITemplate
		if err := checkURITemplate(t.URITemplate); err != nil {
			r.report(ruleResourcesTemplate, subject, raw, "%v", err)
		}
		r.hiddenText(subject, nil, map[string]string{"uriTemplate": t.URITemplate, "name": t.Name, "title": t.Title, "description": t.Description})
		r.icons(subject, t.Icons)
	}
}

var varname = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(\.([A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*$`)
})

// checkURITemplate checks t against RFC 6570's grammar (levels 1 to 4).
func checkURITemplate(t string) error {
	if t == "" {
		return fmt.Errorf("the template is empty")
	}
	for i := 0; i < len(t); {
		switch c := t[i]; {
		case c == '}':
			return fmt.Errorf("'}' at %d closes no expression", i)
		case c == '{':
			end := strings.IndexByte(t[i:], '}')
			if end < 0 {
				return fmt.Errorf("the expression at %d is not closed", i)
			}
			expr := t[i+1 : i+end]
			if strings.ContainsRune(expr, '{') {
				return fmt.Errorf("'{' inside the expression at %d", i)
			}
			if err := checkExpression(expr); err != nil {
				return fmt.Errorf("expression {%s}: %v", expr, err)
			}
			i += end + 1
		case c <= ' ' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' || c == '|' || c == 0x7f:
			return fmt.Errorf("%q at %d may not appear in a URI template's literals", c, i)
		default:
			i++
		}
	}
	return nil
}

func checkExpression(e string) error {
	if e == "" {
		return fmt.Errorf("empty")
	}
	switch e[0] {
	case '+', '#', '.', '/', ';', '?', '&':
		e = e[1:]
	case '=', ',', '!', '@', '|':
		return fmt.Errorf("operator %q is reserved", e[0])
	}
	for _, spec := range strings.Split(e, ",") {
		name := spec
		if n, ok := strings.CutSuffix(spec, "*"); ok {
			name = n
		} else if n, max, ok := strings.Cut(spec, ":"); ok {
			name = n
			if v, err := strconv.Atoi(max); err != nil || v < 1 || v > 9999 || max[0] == '0' {
				return fmt.Errorf("prefix length %q is not 1 to 9999", max)
			}
		}
		if !varname().MatchString(name) {
			return fmt.Errorf("%q is not a variable name", name)
		}
	}
	return nil
}

func clipRaw(b json.RawMessage) json.RawMessage {
	if len(b) > 4096 {
		s, _ := json.Marshal(string(b[:4096]) + "…")
		return s
	}
	return b
}
