// Package record owns mcpi's trace format: the JSON Lines file that
// --record and `mcpi proxy` write and `mcpi replay` reads. It holds the
// Writer (a transport.Tap that records every frame, bad frame, stderr line,
// lifecycle change and HTTP exchange of a connection), the Reader, and the
// Redactor that keeps credentials and the user's -e values out of traces.
//
// A trace is a header line and one event per line. A frame is embedded as
// the verbatim JSON it was on the wire ("msg"), never re-marshalled, so that
// a replay gets back the exact bytes. Traces are read by later versions of
// mcpi: readers ignore unknown fields and event types, and only a change
// that older readers would misread bumps Version. docs/trace-format.md is
// the specification.
//
// This package imports only internal/transport and internal/mcp from mcpi.
package record
