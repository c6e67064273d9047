package mcptext

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// AnswerHint is the command that answers a parked server request.
func AnswerHint(p *daemon.Parked, session string) string {
	base := fmt.Sprintf("mcpi answer %d --session %s", p.ID, session)
	switch {
	case p.Sampling != nil:
		return base + " --sampling-reply TEXT   (or --decline)"
	case p.Elicit != nil && p.Elicit.Mode == "url":
		return base + " --elicit accept   (once the URL is done; or --decline, --cancel)"
	}
	return base + " --elicit-field NAME=VALUE ...   (or --decline, --cancel)"
}

// PrintPending prints one parked server request in full: its kind, message
// and, for a form, each field with its type, whether it is required, its
// allowed values, default and description.
func PrintPending(w io.Writer, d daemon.Pending) {
	kind := d.Kind
	if d.Mode == "url" {
		kind += " (url)"
	}
	fmt.Fprintf(w, "#%d %s", d.ID, kind)
	if d.Command != "" {
		fmt.Fprintf(w, " for: %s", safetext.Sanitize(d.Command, false))
	} else {
		fmt.Fprint(w, " for: ? (the server does not say which call it serves)")
	}
	if age := time.Duration(d.AgeMs) * time.Millisecond; age >= time.Second {
		fmt.Fprintf(w, ", waiting %s", age.Round(time.Second))
	}
	fmt.Fprintln(w)
	switch {
	case d.URL != "":
		fmt.Fprintf(w, "  open: %s\n  message: %s\n", safetext.Sanitize(d.URL, false), safetext.Sanitize(d.Message, true))
	case d.Kind == "sampling/createMessage":
		fmt.Fprintf(w, "  max tokens: %d\n  last message: %s\n", d.MaxTokens, safetext.Sanitize(bounds.Clip(d.LastText), true))
	default:
		fmt.Fprintf(w, "  message: %s\n", safetext.Sanitize(d.Message, true))
		for _, f := range d.Fields {
			line := "  field " + safetext.Sanitize(f.Name, false)
			var attrs []string
			if len(f.Types) > 0 {
				attrs = append(attrs, strings.Join(f.Types, "|"))
			}
			if f.Required {
				attrs = append(attrs, "required")
			}
			if len(f.Enum) > 0 {
				vals := make([]string, len(f.Enum))
				for i, v := range f.Enum {
					b, _ := json.Marshal(v)
					vals[i] = string(b)
				}
				attrs = append(attrs, "one of "+strings.Join(vals, ", "))
			}
			if f.Default != nil {
				b, _ := json.Marshal(f.Default)
				attrs = append(attrs, "default "+string(b))
			}
			if len(attrs) > 0 {
				line += " (" + safetext.Sanitize(strings.Join(attrs, "; "), false) + ")"
			}
			if f.Title != "" {
				line += " " + safetext.Sanitize(f.Title, false)
			}
			if f.Description != "" {
				line += ": " + safetext.Sanitize(bounds.Clip(f.Description), false)
			}
			fmt.Fprintln(w, line)
		}
	}
}
