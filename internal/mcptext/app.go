package mcptext

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// PrintAppInfo writes what mcpi app-info found of an App for a person.
func PrintAppInfo(w io.Writer, in *apps.Info) {
	field := func(name, value string) { fmt.Fprintf(w, "%-12s %s\n", name, value) }
	field("tool", safetext.OneLine(in.Tool)+"  (visible to: "+safetext.OneLine(in.VisibleTo())+")")
	listed := "not listed by resources/list"
	if in.Listed {
		listed = "listed"
	}
	field("resource", safetext.OneLine(in.ResourceURI)+"  ("+listed+")")
	field("type", fmt.Sprintf("%s, %s (%s)", safetext.OneLine(in.MIMEType), bounds.Size(int64(in.Size)), in.Encoding))
	if in.CSP == nil {
		field("csp", "none declared: the restrictive default")
	} else {
		first := true
		for _, f := range []struct {
			name string
			list []string
		}{{"connectDomains", in.CSP.ConnectDomains}, {"resourceDomains", in.CSP.ResourceDomains}, {"frameDomains", in.CSP.FrameDomains}, {"baseUriDomains", in.CSP.BaseURIDomains}} {
			if len(f.list) == 0 {
				continue
			}
			label := ""
			if first {
				label, first = "csp", false
			}
			field(label, f.name+": "+safetext.OneLine(strings.Join(f.list, " ")))
		}
		if first {
			field("csp", "declared, with no domain: nothing from other origins")
		}
	}
	field("policy", safetext.OneLine(in.Policy))
	if len(in.Permissions) > 0 {
		field("permissions", strings.Join(in.Permissions, ", "))
	}
	if in.Domain != "" {
		field("domain", safetext.OneLine(in.Domain))
	}
	if in.PrefersBorder != nil {
		field("border", map[bool]string{true: "prefers a border and background", false: "prefers none"}[*in.PrefersBorder])
	}
	for i, l := range in.Loads {
		label := ""
		if i == 0 {
			label = "loads"
		}
		field(label, l.Kind+" "+safetext.OneLine(l.URL))
	}
	if len(in.Loads) == 0 {
		field("loads", "no script or stylesheet from a tag (a static reading)")
	}
	var notes []string
	for _, d := range in.Domains {
		notes = append(notes, fmt.Sprintf("csp %s %q: %s", d.Field, d.Domain, d.Why))
	}
	for _, l := range in.Undeclared {
		notes = append(notes, fmt.Sprintf("the HTML loads a %s from %s, which the CSP does not declare: a host blocks it (a static reading of the tags)", l.Kind, l.Origin))
	}
	notes = append(notes, in.Warnings...)
	if len(notes) > 0 {
		fmt.Fprintln(w, "warnings")
		for _, n := range notes {
			fmt.Fprintln(w, "  ! "+safetext.OneLine(n))
		}
	}
}
