// Package matrix is what `mcpi check --all` says of the configured servers:
// one line per server (checked, unreachable, its environment failed, or
// skipped, with its findings and each host's verdict), the server × host
// matrix drawn from those lines, and a configured server's entry described
// without its secrets.
package matrix

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/check/doctor"
	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// Line is one server's line of check --all.
type Line struct {
	Name    string `json:"name"`
	Source  string `json:"source"`
	Target  string `json:"target"`
	Outcome string `json:"outcome"` // checked, unreachable, environment, skipped
	Reason  string `json:"reason,omitempty"`
	// Errors, Warnings and Notes count the findings of a checked server.
	Errors   int                 `json:"errors"`
	Warnings int                 `json:"warnings"`
	Notes    int                 `json:"notes"`
	Hosts    []check.HostVerdict `json:"hosts,omitempty"`
	// Report is the server's whole report; Connection the doctor's
	// checklist of one that could not be reached.
	Report     *check.Report  `json:"report,omitempty"`
	Connection *doctor.Report `json:"connection,omitempty"`
}

// redactor redacts what a configured server's entry holds secret.
func redactor(s config.Server) *record.Redactor { return record.NewRedactor(record.ServerSecrets(s)) }

// Target describes a configured server without its secrets: the
// command and its arguments, or the URL.
func Target(s config.Server) string {
	r := redactor(s)
	if s.URL != "" {
		return r.URL(s.URL)
	}
	return strings.Join(r.Args(append([]string{s.Command}, s.Args...)), " ")
}

// Redact takes the entry's secrets out of what check --all says of a
// server that could not be checked: its reason and the doctor's steps.
func (res *Line) Redact(s config.Server) {
	r := redactor(s)
	res.Reason = r.Text(res.Reason)
	if c := res.Connection; c != nil {
		c.Target = res.Target
		for i := range c.Steps {
			c.Steps[i].Detail = r.Text(c.Steps[i].Detail)
		}
	}
}

// verdictMarks are the matrix's cells.
var verdictMarks = map[string]string{"accepted": "ok", "rejected": "REJECT", "needs rewrite": "rewrite", "unknown": "?"}

// Write prints one line per server and the server × host matrix;
// its footer's command for one server names config, the --config FILE
// the servers came from ("" for the machine's files).
func Write(w io.Writer, results []Line, config string) {
	ids := check.HostIDs()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "SERVER\tOUTCOME\tE/W/N")
	for _, id := range ids {
		fmt.Fprint(tw, "\t"+id)
	}
	fmt.Fprintln(tw)
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t", safetext.Sanitize(r.Name, false), r.Outcome)
		if r.Outcome == "checked" || r.Report != nil {
			fmt.Fprintf(tw, "%d/%d/%d", r.Errors, r.Warnings, r.Notes)
		} else {
			fmt.Fprint(tw, "-")
		}
		for _, id := range ids {
			cell := "-"
			if i := slices.IndexFunc(r.Hosts, func(h check.HostVerdict) bool { return h.Host == id }); i >= 0 {
				cell = verdictMarks[r.Hosts[i].Verdict]
			}
			fmt.Fprint(tw, "\t"+cell)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, r := range results {
		if r.Reason != "" {
			fmt.Fprintf(w, "%s: %s\n", safetext.Sanitize(r.Name, false), safetext.OneLine(r.Reason))
		}
	}
	one := "mcpi check --server NAME"
	if config != "" {
		one += " --config " + ShellWord(config)
	}
	fmt.Fprintln(w, "ok: accepted; REJECT: the host rejects a tool (or the request); rewrite: a strict mode needs the schema rewritten; ?: the tools could not be listed. "+one+" shows one server's findings.")
}

// ShellWord is s as one word of a POSIX shell's command line, made safe
// for a terminal.
func ShellWord(s string) string {
	s = safetext.Sanitize(s, false)
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
