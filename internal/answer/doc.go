// Package answer answers a server's requests for the one-shot commands:
// sampling, elicitation and roots from the command's flags (a reply or a
// model, an action and its fields, the roots), else by asking the person
// at the terminal, else by declining with a reason. A Handler is a
// session.Handler and a live session's daemon.Answerer; Terminal asks one
// line at a time.
//
// It knows no command: the flags arrive as values (Flags), the streams as
// an iostreams.IOStreams. It imports nothing of mcpi but chat (a model's
// sampler), daemon (its Answerer), iostreams, mcp, safetext, schema and
// session; no cobra, no terminal library.
package answer
