package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/check/doctor"
	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// checkAllFlags checks the flags of check --all: no TARGET, no --server,
// no --call (a host's configured servers are not for calling tools on).
func (opts *CheckOptions) checkAllFlags(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) > 0 || cmd.ArgsLenAtDash() >= 0:
		return flagErrorf("--all checks the configured servers: give no TARGET (--config FILE names another configuration)")
	case opts.Target.Server != "":
		return flagErrorf("--all checks every configured server: give --server NAME without --all for one")
	case opts.Call:
		return flagErrorf("--all never calls tools: --call is for one server you know")
	case opts.SARIF:
		return flagErrorf("--all prints text or --json; --sarif is for one server")
	}
	return opts.validateHosts()
}

// serverCheck is one server's line of check --all.
type serverCheck struct {
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

// checkAllRun checks every configured server, one at a time: it says
// what it will start before it starts anything, and ends with the
// server × host matrix.
func checkAllRun(ctx context.Context, opts *CheckOptions) error {
	servers, err := loadServers(opts.Target.Config, func(s string) { fmt.Fprintln(opts.IO.ErrOut, s) })
	if err != nil {
		return err
	}
	if len(servers) == 0 {
		return flagErrorf("no server is configured on this machine (mcpi servers lists the files it reads); --config FILE names one")
	}
	fmt.Fprintf(opts.IO.ErrOut, "mcpi check --all: %d server(s), one at a time:\n", len(servers))
	for _, s := range servers {
		fmt.Fprintf(opts.IO.ErrOut, "  %s (%s): %s\n", sanitize(s.Name, false), s.Source, sanitize(serverTarget(s), false))
	}
	var results []serverCheck
	for _, s := range servers {
		if ctx.Err() != nil {
			break
		}
		results = append(results, opts.checkOne(ctx, s))
	}
	if opts.JSON {
		b, err := json.Marshal(map[string]any{"servers": results, "hosts": check.HostIDs()})
		if err != nil {
			return err
		}
		if err := iostreams.WriteRawJSON(opts.IO, b); err != nil {
			return err
		}
	} else {
		writeMatrix(opts.IO.Out, results, opts.Target.Config)
	}
	return allExit(results)
}

// serverRedactor redacts what a configured server's entry holds secret:
// the values of its env that look secret, and its headers'.
func serverRedactor(s config.Server) *record.Redactor {
	var secrets []string
	for k, v := range s.Env {
		if record.IsSecretEnv(k, v) {
			secrets = append(secrets, v)
		}
	}
	for _, v := range s.Headers {
		secrets = append(secrets, v)
	}
	return record.NewRedactor(secrets)
}

// serverTarget describes a configured server without its secrets: the
// command and its arguments, or the URL.
func serverTarget(s config.Server) string {
	r := serverRedactor(s)
	if s.URL != "" {
		return r.URL(s.URL)
	}
	return strings.Join(r.Args(append([]string{s.Command}, s.Args...)), " ")
}

// redact takes the entry's secrets out of what check --all says of a
// server that could not be checked: its reason and the doctor's steps.
func (res *serverCheck) redact(s config.Server) {
	r := serverRedactor(s)
	res.Reason = r.Text(res.Reason)
	if c := res.Connection; c != nil {
		c.Target = res.Target
		for i := range c.Steps {
			c.Steps[i].Detail = r.Text(c.Steps[i].Detail)
		}
	}
}

// checkOne checks one configured server, as mcpi check --server NAME
// --config SOURCE would, and says how it went.
func (opts *CheckOptions) checkOne(ctx context.Context, s config.Server) serverCheck {
	res := serverCheck{Name: s.Name, Source: s.Source, Target: serverTarget(s)}
	switch {
	case s.Err != nil:
		res.Outcome, res.Reason = "skipped", oneLine(s.Err.Error())
		return res
	case s.Disabled:
		res.Outcome, res.Reason = "skipped", "disabled in "+s.Source
		return res
	}
	fmt.Fprintf(opts.IO.ErrOut, "checking %s…\n", sanitize(s.Name, false))
	one := &CheckOptions{ConnOptions: ConnOptions{IO: opts.IO, Args: opts.Args, RuntimeDir: opts.RuntimeDir,
		Target: TargetOptions{Server: s.Name, Config: s.Source, Timeout: opts.Target.Timeout, MaxTime: opts.Target.MaxTime,
			Transport: "auto", Era: opts.Target.Era, stderrTTY: false, httpTransport: opts.Target.httpTransport}},
		Hosts: opts.Hosts}
	hk, rep := one.hooksFor()
	var diag *diagnosis
	attempt := timedAttempt()
	hk.connectFailed = func(err error) error {
		d := one.diagnose(ctx, attempt(err))
		diag = &d
		return err
	}
	err := one.withHooks(ctx, hk, func(c *session.Client) error {
		*rep = *one.runChecks(ctx, c)
		return nil
	})
	switch {
	case diag != nil && diag.handshake != nil:
		rep = diag.handshake
	case diag != nil:
		res.Outcome, res.Reason, res.Connection = "unreachable", diag.what, diag.doc
		if diag.code == ExitEnvironment {
			res.Outcome = "environment"
		}
		res.redact(s)
		return res
	case err != nil:
		res.Outcome, res.Reason = "skipped", oneLine(err.Error())
		res.redact(s)
		return res
	}
	res.Outcome, res.Report, res.Hosts = "checked", rep, rep.Hosts
	res.Errors, res.Warnings, res.Notes = rep.Count(check.Error), rep.Count(check.Warning), rep.Count(check.Info)
	if len(rep.Environment) > 0 && res.Errors == 0 {
		res.Outcome, res.Reason = "environment", rep.Environment[0].Why
	}
	return res
}

// verdictMarks are the matrix's cells.
var verdictMarks = map[string]string{"accepted": "ok", "rejected": "REJECT", "needs rewrite": "rewrite", "unknown": "?"}

// writeMatrix prints one line per server and the server × host matrix;
// its footer's command for one server names config, the --config FILE
// the servers came from ("" for the machine's files).
func writeMatrix(w io.Writer, results []serverCheck, config string) {
	ids := check.HostIDs()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, "SERVER\tOUTCOME\tE/W/N")
	for _, id := range ids {
		fmt.Fprint(tw, "\t"+id)
	}
	fmt.Fprintln(tw)
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t", sanitize(r.Name, false), r.Outcome)
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
			fmt.Fprintf(w, "%s: %s\n", sanitize(r.Name, false), oneLine(r.Reason))
		}
	}
	one := "mcpi check --server NAME"
	if config != "" {
		one += " --config " + shellWord(config)
	}
	fmt.Fprintln(w, "ok: accepted; REJECT: the host rejects a tool (or the request); rewrite: a strict mode needs the schema rewritten; ?: the tools could not be listed. "+one+" shows one server's findings.")
}

// shellWord is s as one word of a POSIX shell's command line, made safe
// for a terminal.
func shellWord(s string) string {
	s = sanitize(s, false)
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// allExit is the exit of check --all: 1 when a server has errors (or a
// host --host names rejects it), else 3 when one could not be reached,
// else 9 when one's environment failed, else 0.
func allExit(results []serverCheck) error {
	worst := ExitOK
	var what []string
	for _, r := range results {
		code := ExitOK
		switch {
		case r.Errors > 0:
			code = ExitToolError
		case r.Outcome == "unreachable":
			code = ExitConnect
		case r.Outcome == "environment":
			code = ExitEnvironment
		}
		if code != ExitOK {
			what = append(what, r.Name)
		}
		if rank(code) > rank(worst) {
			worst = code
		}
	}
	if worst == ExitOK {
		return nil
	}
	kind := map[ExitCode]string{ExitToolError: KindCheckFailed, ExitConnect: KindUnreachable, ExitEnvironment: KindCheckEnvironment}[worst]
	return errSilent{code: worst, kind: kind, what: "check --all: " + strings.Join(what, ", ") + " did not pass"}
}

// rank orders check --all's exits: errors first.
func rank(c ExitCode) int {
	return map[ExitCode]int{ExitOK: 0, ExitEnvironment: 1, ExitConnect: 2, ExitToolError: 3}[c]
}
