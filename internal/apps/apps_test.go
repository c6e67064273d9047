package apps

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

func TestToolMeta(t *testing.T) {
	for _, c := range []struct {
		name, meta string
		want       Tool
		model, app bool
	}{
		{"none", ``, Tool{}, true, true},
		{"other meta", `{"x":1}`, Tool{}, true, true},
		{"app", `{"ui":{"resourceUri":"ui://a/b"}}`, Tool{ResourceURI: "ui://a/b"}, true, true},
		{"app only", `{"ui":{"resourceUri":"ui://a/b","visibility":["app"]}}`, Tool{ResourceURI: "ui://a/b", Visibility: []string{"app"}}, false, true},
		{"model only", `{"ui":{"visibility":["model"]}}`, Tool{Visibility: []string{"model"}}, true, false},
		{"nobody", `{"ui":{"visibility":[]}}`, Tool{Visibility: []string{}, Problems: []string{"_meta.ui.visibility is empty: neither the model nor an App may call the tool"}}, false, false},
		{"legacy", `{"ui/resourceUri":"ui://old"}`, Tool{ResourceURI: "ui://old", Legacy: true}, true, true},
		{"both keys", `{"ui":{"resourceUri":"ui://new"},"ui/resourceUri":"ui://old"}`, Tool{ResourceURI: "ui://new"}, true, true},
		{"bad uri", `{"ui":{"resourceUri":7}}`, Tool{Problems: []string{"_meta.ui.resourceUri is not a string"}}, true, true},
		{"bad visibility", `{"ui":{"resourceUri":"ui://a","visibility":["robot"]}}`, Tool{ResourceURI: "ui://a", Visibility: []string{"robot"}, Problems: []string{`_meta.ui.visibility holds "robot": the values are "model" and "app"`}}, false, false},
		{"ui not object", `{"ui":"x"}`, Tool{Problems: []string{"_meta.ui is not an object"}}, true, true},
	} {
		got := ToolMeta(json.RawMessage(c.meta))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if got.Visible(Model) != c.model || got.Visible(App) != c.app {
			t.Errorf("%s: visible to model %v app %v", c.name, got.Visible(Model), got.Visible(App))
		}
	}
}

func TestPolicy(t *testing.T) {
	var none *CSP
	if p := none.Policy(); !strings.HasPrefix(p, "default-src 'none'; script-src 'self' 'unsafe-inline';") || !strings.Contains(p, "connect-src 'none'") || !strings.Contains(p, "object-src 'none'") {
		t.Errorf("default policy %q", p)
	}
	c := &CSP{ConnectDomains: []string{"https://api.example.com"}, ResourceDomains: []string{"https://cdn.example.com", "https://x; script-src *"}, FrameDomains: []string{"https://www.youtube.com"}}
	p := c.Policy()
	for _, want := range []string{"connect-src 'self' https://api.example.com", "script-src 'self' 'unsafe-inline' https://cdn.example.com;", "frame-src https://www.youtube.com", "base-uri 'self'", "object-src 'none'"} {
		if !strings.Contains(p, want) {
			t.Errorf("policy %q lacks %q", p, want)
		}
	}
	if strings.Contains(p, "script-src *") {
		t.Errorf("a domain broke out of its directive: %q", p)
	}
}

func TestDomainFindings(t *testing.T) {
	for _, c := range []struct{ d, sev string }{
		{"https://api.example.com", ""},
		{"https://*.example.com", ""},
		{"wss://rt.example.com:8443", ""},
		{"http://localhost:3000", ""},
		{"*", "warning"},
		{"https:", "warning"},
		{"http://api.example.com", "warning"},
		{"api.example.com", "error"},
		{"https://example.com/path", "error"},
		{"https://a.*.example.com", "error"},
		{"https://x; script-src *", "error"},
		{"", "error"},
	} {
		fs := (&CSP{ConnectDomains: []string{c.d}}).Findings()
		got := ""
		if len(fs) > 0 {
			got = fs[0].Severity
		}
		if got != c.sev {
			t.Errorf("%q: %q (%v), want %q", c.d, got, fs, c.sev)
		}
	}
}

func TestStaticLoads(t *testing.T) {
	doc := `<!DOCTYPE html><html><head>
<script src="https://cdn.example.com/a.js"></script>
<script>inline()</script>
<link rel="stylesheet" href="//fonts.example.org/f.css">
<link rel="icon" href="https://icons.example.net/i.png">
<link rel="modulepreload" href="https://esm.example.io/m.js">
<script type="module" src="./local.js"></script>
</head><body><img src="https://img.example.com/x.png"></body></html>`
	got := StaticLoads(doc)
	want := []Load{
		{"script", "https://cdn.example.com/a.js", "https://cdn.example.com"},
		{"stylesheet", "//fonts.example.org/f.css", "https://fonts.example.org"},
		{"script", "https://esm.example.io/m.js", "https://esm.example.io"},
		{"script", "./local.js", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("loads %+v\nwant %+v", got, want)
	}
	c := &CSP{ResourceDomains: []string{"https://cdn.example.com:443", "https://*.example.org", "http://local.test:8080"}}
	for origin, ok := range map[string]bool{"https://cdn.example.com": true, "https://fonts.example.org": true, "https://esm.example.io": false, "http://cdn.example.com": false, "": false,
		"http://local.test:8080": true, "http://local.test": false} {
		if c.Allowed(origin) != ok {
			t.Errorf("Allowed(%q) = %v", origin, !ok)
		}
	}
	if !(&CSP{ResourceDomains: []string{"*"}}).Allowed("https://x.example") || !(&CSP{ResourceDomains: []string{"https:"}}).Allowed("https://x.example") {
		t.Errorf("* and https: allow an https origin")
	}
	if bad := ToolMeta(json.RawMessage(`{"ui":{"visibility":"app"}}`)); !bad.BadVisibility {
		t.Errorf("a visibility that is a string: %+v", bad)
	}
}

// TestNoCSPIsNoWarning: a resource that declares no CSP gets the
// restrictive default (SEP-1865), which is no fault: Describe says so in
// its policy, not in its warnings.
func TestNoCSPIsNoWarning(t *testing.T) {
	tool := &mcp.Tool{Name: "show", Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://a/b"}}`)}
	html := "<p>hi</p>"
	res := &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: "ui://a/b", MimeType: MIMEType, Text: &html}}}
	in, err := Describe(tool, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in.CSP != nil || len(in.Warnings) > 0 || in.Policy == "" {
		t.Errorf("no CSP: csp %v, warnings %q, policy %q", in.CSP, in.Warnings, in.Policy)
	}
}

// TestEmptyVisibilityWarns: app-info says what check says of an empty
// visibility (one rule, in ToolMeta): a warning, and "nobody" for who sees
// the tool, never a blank.
func TestEmptyVisibilityWarns(t *testing.T) {
	tool := &mcp.Tool{Name: "hidden", Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://a/b","visibility":[]}}`)}
	html := "<p>hi</p>"
	res := &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: "ui://a/b", MimeType: MIMEType, Text: &html}}}
	in, err := Describe(tool, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in.VisibleTo() != "nobody" || len(in.Warnings) != 1 || !strings.Contains(in.Warnings[0], "visibility is empty") {
		t.Errorf("visible to %q, warnings %q", in.VisibleTo(), in.Warnings)
	}
}
