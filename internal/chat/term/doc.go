// Package term is mcpi chat's side of the terminal: the exchange shown as
// it goes (the model's text streamed on stdout, its tool calls and their
// results on stderr), a tool call put to the person (run, edit, refuse),
// the conversation read line by line, and a --prompt run's end (a summary
// line, or the whole exchange as one JSON document, Report). What the
// model and the server wrote is sanitised before it reaches the terminal.
//
// The conversation itself is internal/chat's Runner; this package only
// talks with the person, through an iostreams.IOStreams. It imports
// nothing of mcpi but chat, iostreams, llm and safetext; no cobra, no
// terminal library.
package term
