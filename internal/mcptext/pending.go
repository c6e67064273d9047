package mcptext

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/daemon"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
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

// PendingHead is what mcpi pending --json says of the list before its
// requests: how many it holds, and how many the server asked that it does
// not (refused past the parked requests' budget).
type PendingHead struct {
	Count     int   `json:"count"`
	Refused   int64 `json:"refused"`
	Truncated bool  `json:"truncated"`
	MaxCount  int   `json:"maxCount"`
	MaxBytes  int64 `json:"maxBytes"`
}

// WritePending prints the parked requests of board (as JSON with asJSON)
// one at a time: the output is as large as the board's budget lets the
// requests be, and never built whole. Text and JSON list the same
// requests, each once, and say the same of those left out.
func WritePending(ios *iostreams.IOStreams, asJSON bool, board *daemon.Board) error {
	now := time.Now()
	list := board.List()
	u := board.Usage()
	head := PendingHead{Count: len(list), Refused: u.Refused, Truncated: u.Refused > 0, MaxCount: u.MaxCount, MaxBytes: u.MaxBytes}
	if asJSON {
		return iostreams.WriteJSONList(ios, head, "requests", len(list), func(i int) any { return list[i].Describe(now) })
	}
	for i, p := range list {
		if i > 0 {
			fmt.Fprintln(ios.Out)
		}
		PrintPending(ios.Out, p.Describe(now))
	}
	switch {
	case len(list) == 0 && u.Refused == 0:
		fmt.Fprintln(ios.ErrOut, "No server request is waiting.")
	case u.Refused > 0:
		fmt.Fprintf(ios.ErrOut, "%d server request(s) waiting; %d more were refused and are not listed: the session parks at most %d requests and %s of params (session start --parked-max, --parked-max-bytes)\n",
			len(list), u.Refused, u.MaxCount, bounds.Size(u.MaxBytes))
	default:
		fmt.Fprintf(ios.ErrOut, "%d server request(s) waiting.\n", len(list))
	}
	return nil
}

// Waiting is what call --no-wait and result print while the call waits.
type Waiting struct {
	Status  string           `json:"status"` // "waiting"
	Job     int              `json:"job"`
	Command string           `json:"command"`
	Pending []daemon.Pending `json:"pending"`
	Answer  []string         `json:"answer"`
	Result  string           `json:"result"`
}

// WriteWaiting says that job j of session name waits for the answers to
// the parked requests list, and how to give them (as JSON with asJSON).
func WriteWaiting(cios *iostreams.IOStreams, name string, j *daemon.Job, list []*daemon.Parked, asJSON bool) {
	now := time.Now()
	w := Waiting{Status: "waiting", Job: j.ID, Command: strings.Join(j.Slot.DisplayArgs(), " "),
		Result: fmt.Sprintf("mcpi result %d --session %s", j.ID, name)}
	for _, p := range list {
		d := p.Describe(now)
		w.Pending = append(w.Pending, d)
		w.Answer = append(w.Answer, AnswerHint(p, name))
	}
	if asJSON {
		iostreams.WriteJSON(cios, w)
		return
	}
	out := cios.Out
	fmt.Fprintf(out, "%s is waiting: the server asks something the call's flags do not answer.\n", safetext.Sanitize(w.Command, false))
	for i, d := range w.Pending {
		PrintPending(out, d)
		fmt.Fprintf(out, "  answer: %s\n", w.Answer[i])
	}
	fmt.Fprintf(out, "then:     %s\n", w.Result)
}
