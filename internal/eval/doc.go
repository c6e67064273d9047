// Package eval is `mcpi eval`: what a model does with a server's tools,
// measured. A file of cases (YAML, read as strictly as the collections of
// mcpi test) says for each a prompt, or a conversation, and what must
// happen: the tools called, in any order or in order, their arguments, the
// tools not called, at most so many calls, the final text, and a rubric a
// judge model grades. The Runner runs every case so many times per model
// against one MCP session, each run a fresh chat.Runner that approves
// every call, within a bound of runs in flight per provider; the Report
// gives per case and model the pass rate with its 95% Wilson interval,
// tokens, the median latency and cost, and Compare says, against a
// baseline report, which pass rates dropped with statistical significance
// (a one-sided two-proportion z-test, Fisher's exact test when the counts
// are small), not by noise.
//
// Grading (Grade, ParseVerdict) is a pure function of a case and what a
// run did. The package imports no front end: internal/cli's eval verb
// reads the flags, connects, and writes the reports this package makes.
package eval
