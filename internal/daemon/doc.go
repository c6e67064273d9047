// Package daemon is a live session's daemon: the session it holds (Held),
// the commands under way in it (Slot), the dispatcher that picks which
// command answers a server request (Dispatcher), the board where requests no
// command can answer wait (Board), the hub that feeds tails and attached
// clients (Hub), the relay that plays the server to an attached client, and
// that client's connection (RelayConn). It knows nothing of commands: the
// command layer gives Serve the function that runs a command line, and each
// command is handed the Held and its Slot as fields.
//
// A live session is a session.Client held by a background mcpi (the daemon,
// `mcpi session daemon`, hidden) that serves commands over a Unix socket
// (internal/live). A verb given --session sends its command line to the
// daemon, which runs the very same verb code against the session it holds,
// with streams that carry stdout and stderr back apart; the exit code comes
// back last. Output, --json and exit codes are the one-shot command's because
// the code is.
//
// An attached client (mcpi connect --session: the TUI) reaches the server
// through the daemon, which relays for it: the client is an ordinary
// session.Client whose connection is the daemon's socket, and the daemon
// plays the server to it.
//
//   - initialize and server/discover are answered with what the server
//     answered when the session started: the session is not started twice.
//   - Every other request goes to the server through the held session
//     (session.Client.Relay), under the held session's own id; the answer
//     comes back under the client's. A progress token the client chose is
//     swapped for the held session's and back.
//   - The server's notifications reach every attached client. Ids that name
//     something of another client of the session (a progress token, a
//     subscription, a cancelled server request) are made strings
//     "session:ID", which no id of the attached client can equal.
//   - A server request no command answers (it is parked for mcpi answer) is
//     also sent to every attached client, under the board's number for it
//     (as its id, and in its _meta as mcp.MetaParkedRequest): one number
//     for a person and a command, as in mcpi pending and mcpi tail. The
//     first answer, theirs or mcpi answer's, is the one given, and the
//     others are told it was cancelled.
//   - The attached client's wire pane is fed the events of the held
//     session's connection, from its start (a bounded history) on, and
//     its log and notification panes the notifications of that history,
//     at their own times, apart from the live ones (shown, not acted on).
//   - The session's roots, when they change (mcpi roots, another attached
//     client), are sent to every attached client again.
//   - What the daemon says itself (a parked request answered elsewhere is
//     withdrawn with notifications/cancelled) carries the _meta marker
//     mcp.MetaFromSession, which the daemon removes from what the server
//     says: no client takes the daemon's word for the server's.
//
// A server request (sampling, elicitation) that no command under way can
// answer is parked (it belongs to the command that caused it: a modern
// request's own, or the only command under way not held up by a parked
// request of its own; else to none, and every candidate is told): it waits on the Board, listed by mcpi pending, until
// mcpi answer answers it or the server withdraws it. While it waits the
// session's request clock stands still, as while a person types an answer
// (session.Client.Answering): the handler has not returned.
//
// A session daemon's log is NAME.log in the runtime directory (often a
// small tmpfs): what the daemon says once the session started, and the
// session's warnings. A server that floods the session with junk must not
// fill it, so the log is bounded twice: warnings of one kind past
// bounds.WarningBurst are counted rather than written (the count is
// written at each power of ten and when the session ends), and the file
// holds at most its budget in bytes (bounds.DaemonLogBytes): a write that
// would pass it starts the file again, with a line saying how much was
// cleared.
package daemon
