package apps

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// Load is a script or stylesheet an App's HTML loads from its tags, as
// written (not what its scripts load when they run).
type Load struct {
	Kind string `json:"kind"` // "script" or "stylesheet"
	URL  string `json:"url"`
	// Origin is the URL's origin (scheme://host[:port]); empty for a
	// relative URL or a data: one.
	Origin string `json:"origin,omitempty"`
}

// StaticLoads reads the HTML's <script src> and <link rel=stylesheet
// href> (and <link rel=modulepreload|preload as=script|style>): what a
// static reading can see the App load. What a script loads at run time
// is not seen.
func StaticLoads(doc string) []Load {
	var out []Load
	z := html.NewTokenizer(strings.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			attr := map[string]string{}
			for _, a := range t.Attr {
				attr[strings.ToLower(a.Key)] = a.Val
			}
			switch t.DataAtom.String() {
			case "script":
				if src := strings.TrimSpace(attr["src"]); src != "" {
					out = append(out, load("script", src))
				}
			case "link":
				href := strings.TrimSpace(attr["href"])
				rel := strings.Fields(strings.ToLower(attr["rel"]))
				as := strings.ToLower(attr["as"])
				switch {
				case href == "":
				case has(rel, "stylesheet") || (has(rel, "preload") && as == "style"):
					out = append(out, load("stylesheet", href))
				case has(rel, "modulepreload") || (has(rel, "preload") && as == "script"):
					out = append(out, load("script", href))
				}
			}
		}
	}
}

func has(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func load(kind, ref string) Load {
	l := Load{Kind: kind, URL: ref}
	if strings.HasPrefix(ref, "//") {
		ref = "https:" + ref
	}
	if u, err := url.Parse(ref); err == nil && u.Host != "" && u.Scheme != "" {
		l.Origin = u.Scheme + "://" + u.Host
	}
	return l
}

// Allowed says whether a resource domain of the CSP allows the origin:
// the same origin, or a *. wildcard over its host with the same scheme.
func (c *CSP) Allowed(origin string) bool {
	if c == nil || origin == "" {
		return false
	}
	ou, err := url.Parse(origin)
	if err != nil {
		return false
	}
	for _, d := range c.ResourceDomains {
		switch {
		case d == "*" && (ou.Scheme == "http" || ou.Scheme == "https"):
			return true
		case d == ou.Scheme+":":
			return true // a scheme source: https:
		}
		du, err := url.Parse(d)
		if err != nil || du.Scheme != ou.Scheme || port(du) != port(ou) {
			continue
		}
		if strings.EqualFold(du.Hostname(), ou.Hostname()) {
			return true
		}
		if suffix, ok := strings.CutPrefix(du.Hostname(), "*."); ok &&
			strings.HasSuffix(strings.ToLower(ou.Hostname()), "."+strings.ToLower(suffix)) {
			return true
		}
	}
	return false
}

// port is a URL's port, its scheme's default when it names none.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch u.Scheme {
	case "https", "wss":
		return "443"
	case "http", "ws":
		return "80"
	}
	return ""
}
