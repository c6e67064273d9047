package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/check"
	"github.com/mcpi-dev/mcpi/internal/check/matrix"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// checkAllFlags checks the flags of check --all: no TARGET, no --server,
// no --call (a host's configured servers are not for calling tools on).
func (opts *CheckOptions) checkAllFlags(cmd *cobra.Command, args []string) error {
	switch {
	case len(args) > 0 || cmd.ArgsLenAtDash() >= 0:
		return command.FlagErrorf("--all checks the configured servers: give no TARGET (--config FILE names another configuration)")
	case opts.Target.Server != "":
		return command.FlagErrorf("--all checks every configured server: give --server NAME without --all for one")
	case opts.Call:
		return command.FlagErrorf("--all never calls tools: --call is for one server you know")
	case opts.SARIF:
		return command.FlagErrorf("--all prints text or --json; --sarif is for one server")
	}
	return opts.validateHosts()
}

// checkAllRun checks every configured server, one at a time: it says
// what it will start before it starts anything, and ends with the
// server × host matrix.
func checkAllRun(ctx context.Context, opts *CheckOptions) error {
	servers, err := command.LoadServers(opts.Target.Config, func(s string) { fmt.Fprintln(opts.IO.ErrOut, s) })
	if err != nil {
		return err
	}
	if len(servers) == 0 {
		return command.FlagErrorf("no server is configured on this machine (mcpi servers lists the files it reads); --config FILE names one")
	}
	fmt.Fprintf(opts.IO.ErrOut, "mcpi check --all: %d server(s), one at a time:\n", len(servers))
	for _, s := range servers {
		fmt.Fprintf(opts.IO.ErrOut, "  %s (%s): %s\n", command.Sanitize(s.Name, false), s.Source, command.Sanitize(matrix.Target(s), false))
	}
	var results []matrix.Line
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
		matrix.Write(opts.IO.Out, results, opts.Target.Config)
	}
	return allExit(results)
}

// checkOne checks one configured server, as mcpi check --server NAME
// --config SOURCE would, and says how it went.
func (opts *CheckOptions) checkOne(ctx context.Context, s config.Server) matrix.Line {
	res := matrix.Line{Name: s.Name, Source: s.Source, Target: matrix.Target(s)}
	switch {
	case s.Err != nil:
		res.Outcome, res.Reason = "skipped", command.OneLine(s.Err.Error())
		return res
	case s.Disabled:
		res.Outcome, res.Reason = "skipped", "disabled in "+s.Source
		return res
	}
	fmt.Fprintf(opts.IO.ErrOut, "checking %s…\n", command.Sanitize(s.Name, false))
	one := &CheckOptions{ConnOptions: command.ConnOptions{IO: opts.IO, Args: opts.Args, RuntimeDir: opts.RuntimeDir,
		Target: command.TargetOptions{Server: s.Name, Config: s.Source, Timeout: opts.Target.Timeout, MaxTime: opts.Target.MaxTime,
			Transport: "auto", Era: opts.Target.Era, StderrTTY: false, HTTPTransport: opts.Target.HTTPTransport}},
		Hosts: opts.Hosts}
	hk, rep := one.hooksFor()
	var diag *diagnosis
	attempt := timedAttempt()
	hk.ConnectFailed = func(err error) error {
		d := one.diagnose(ctx, attempt(err))
		diag = &d
		return err
	}
	err := one.WithHooks(ctx, hk, func(c *session.Client) error {
		*rep = *one.runChecks(ctx, c)
		return nil
	})
	switch {
	case diag != nil && diag.handshake != nil:
		rep = diag.handshake
	case diag != nil:
		res.Outcome, res.Reason, res.Connection = "unreachable", diag.what, diag.doc
		if diag.code == command.ExitEnvironment {
			res.Outcome = "environment"
		}
		res.Redact(s)
		return res
	case err != nil:
		res.Outcome, res.Reason = "skipped", command.OneLine(err.Error())
		res.Redact(s)
		return res
	}
	res.Outcome, res.Report, res.Hosts = "checked", rep, rep.Hosts
	res.Errors, res.Warnings, res.Notes = rep.Count(check.Error), rep.Count(check.Warning), rep.Count(check.Info)
	if len(rep.Environment) > 0 && res.Errors == 0 {
		res.Outcome, res.Reason = "environment", rep.Environment[0].Why
	}
	return res
}

// allExit is the exit of check --all: 1 when a server has errors (or a
// host --host names rejects it), else 3 when one could not be reached,
// else 9 when one's environment failed, else 0.
func allExit(results []matrix.Line) error {
	worst := command.ExitOK
	var what []string
	for _, r := range results {
		code := command.ExitOK
		switch {
		case r.Errors > 0:
			code = command.ExitToolError
		case r.Outcome == "unreachable":
			code = command.ExitConnect
		case r.Outcome == "environment":
			code = command.ExitEnvironment
		}
		if code != command.ExitOK {
			what = append(what, r.Name)
		}
		if rank(code) > rank(worst) {
			worst = code
		}
	}
	if worst == command.ExitOK {
		return nil
	}
	kind := map[command.ExitCode]string{command.ExitToolError: command.KindCheckFailed, command.ExitConnect: command.KindUnreachable, command.ExitEnvironment: command.KindCheckEnvironment}[worst]
	return command.ErrSilent{Code: worst, Kind: kind, What: "check --all: " + strings.Join(what, ", ") + " did not pass"}
}

// rank orders check --all's exits: errors first.
func rank(c command.ExitCode) int {
	return map[command.ExitCode]int{command.ExitOK: 0, command.ExitEnvironment: 1, command.ExitConnect: 2, command.ExitToolError: 3}[c]
}
