// Package session is mcpi's MCP client core: a JSON-RPC engine over a
// transport.Conn, the protocol lifecycle, a typed API for every
// client->server method, and the dispatch of server->client requests to one
// Handler that a front end implements.
//
// Every request has an inactivity timeout (Options.Timeout, reset by
// progress) and a maximum time (Options.MaxTime). While the Handler answers
// a server request (a person typing a sampling reply, an elicitation form,
// the roots; a legacy server->client request or an input request of a
// modern multi round-trip request alike) neither clock runs for any
// pending request: the inactivity clock starts again from zero when the
// last answer is given, and the maximum is extended by the time held. So a
// tools/call that waits on a person does not time out, cancel itself and
// lose the reply. Client.Answering says how many answers are awaited.
//
// The client knows the health of its connection and reports each change
// (Client.Health, Options.OnHealth): HealthUnreachable when an HTTP server
// cannot be reached (a request failed, the standalone GET stream could not
// be reopened, or a keepalive ping got no answer: Options.KeepAlive),
// HealthUp when it answers again, HealthRenewing then HealthUp when the
// server forgot the session and a new one was started (the front end
// reloads its lists), HealthSessionLost when none could be. A server that
// answers 400 with an error about the session, as some do, instead of the
// spec's 404, is treated alike, with a warning.
//
// It knows MCP and nothing about terminals: the TUI and the CLI are two front
// ends of the same Client. It imports internal/mcp and internal/transport.
package session
