// Package cli holds mcpi's cobra commands: flag parsing, the TARGET grammar,
// output formats and the mapping of errors to exit codes. Commands write to
// an IOStreams, never to os.Stdout, and return errors, never call os.Exit.
//
// It imports the session, transport, record, live and demoserver packages; nothing
// imports it but cmd/mcpi.
package cli
