// Package proxyrun runs mcpi proxy: one run of the stdio or HTTP proxy
// (internal/proxy) between a host and its server, with its trace, the
// faults and breakpoints that judge its frames (internal/intercept), and
// its TUI, shown on a terminal or served on a socket for mcpi proxy
// attach (internal/attach).
//
// The command layer parses the flags and gives a run what it needs from
// above as values: the streams, the TUI (a function), the HTTP proxy's
// listener and server. It imports no TUI and nothing of the command
// layer; its errors say which are the options' fault (UsageError), the
// proxy's (ConnectError) and the server's exit status (ExitError).
package proxyrun
