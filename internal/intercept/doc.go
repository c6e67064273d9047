// Package intercept changes frames on their way between a host and a
// server, for mcpi proxy: the faults of a --faults file (rules of a query
// of the search language and an action: delay, drop, an error answer, a
// corruption, a duplicate, a reorder, a slow stream, a close, an HTTP
// status, a cut stream), drawn from a seeded source so that a run can be
// repeated, and the breakpoints (Gate) that hold a frame until a person or
// a deadline decides its fate. Every change is a transport event of kind
// intercept with the original frame and what was sent instead.
//
// It moves no bytes itself: internal/proxy asks it what to send. It
// imports bounds, query, rows and transport only.
package intercept
