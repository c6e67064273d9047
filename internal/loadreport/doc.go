// Package loadreport is the report of a load run (mcpi bench): the
// document --json prints and the text a person reads, drawn from a
// load.Result. What the server or the run said crosses a redactor before
// it is in the document, and is sanitised before it reaches a terminal.
//
// It imports only load, record and safetext: never the command layer.
package loadreport
