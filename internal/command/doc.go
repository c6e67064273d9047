// Package command is what every command of mcpi shares, as cli/cli's
// pkg/cmdutil is: the Factory a command is built from; the options of a
// command that talks to a server (ConnOptions: the target and its flags,
// authorization, the trace, the answers to a server's requests) and the
// run made and closed for each execution, which owns its state (ConnRun:
// the session, the recorder and exporter, the trace context, the answers
// log); a live session's forwarding; the exit codes and the errors that
// choose them, in one place; the --json error object. The verbs in
// internal/cli keep their options, flags and run functions, and nothing
// here knows a verb.
package command
