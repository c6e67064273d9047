package check

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

var iconSize = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([1-9][0-9]*x[1-9][0-9]*|any)$`) })

// icons checks the icons of subject: an https (or http) URL or a base64
// data: URI of an image, sizes as WxH or "any".
func (r *run) icons(subject string, icons []mcp.Icon) {
	r.check(ruleIconsValid)
	for i, ic := range icons {
		what := fmt.Sprintf("icon %d", i)
		u, err := url.Parse(ic.Src)
		switch {
		case ic.Src == "":
			r.report(ruleIconsValid, subject, ic, "%s has no src", what)
			continue
		case err != nil:
			r.report(ruleIconsValid, subject, ic, "%s: src is not a URI: %v", what, err)
			continue
		case u.Scheme == "data":
			meta, data, ok := strings.Cut(u.Opaque, ",")
			if !ok || !strings.HasSuffix(meta, ";base64") || !strings.HasPrefix(meta, "image/") {
				r.report(ruleIconsValid, subject, nil, "%s: a data: src must be data:image/...;base64,...", what)
			} else if _, err := base64.StdEncoding.DecodeString(data); err != nil {
				r.report(ruleIconsValid, subject, nil, "%s: the data: src is not base64: %v", what, err)
			}
		case u.Scheme == "http":
			r.report(ruleIconsValid, subject, ic, "%s is fetched over plain http", what)
		case u.Scheme != "https":
			r.report(ruleIconsValid, subject, ic, "%s: src scheme %q is neither https nor data", what, u.Scheme)
		}
		for _, s := range ic.Sizes {
			if !iconSize().MatchString(s) {
				r.report(ruleIconsValid, subject, ic, "%s: size %q is neither WxH nor \"any\"", what, s)
			}
		}
		if ic.Theme != "" && ic.Theme != "light" && ic.Theme != "dark" {
			r.report(ruleIconsValid, subject, ic, "%s: theme %q is neither light nor dark", what, ic.Theme)
		}
	}
}

// headerAnnotations checks a tool's x-mcp-header annotations.
func (r *run) headerAnnotations(subject string, inputSchema json.RawMessage) {
	r.check(ruleToolsXMcpHeader)
	if err := session.HeaderAnnotationError(inputSchema); err != nil {
		r.report(ruleToolsXMcpHeader, subject, inputSchema, "%v: a Streamable HTTP client drops the tool", err)
	}
}
