// Package shellcomp is what a shell's Tab completes on mcpi's command
// line: the values of flags (the closed sets, a comma-separated list's
// next item, a model's provider, the search language), the runtime
// directory's sessions and proxies, the configured servers, and, in a live
// session, the names its server lists (tools, resources, templates,
// prompts, a tool's arguments and their closed values), asked of the
// session's daemon under one clock. Register gives a command tree these
// completions, as cobra's CompletionFuncs, for a command line that asks
// for them (Requested).
//
// It is not MCP's completion/complete (mcpi complete), which a server
// answers. It imports cobra and the rooms its values come from; never the
// command layer, which gives it what only the command layer knows
// (Sources).
package shellcomp
