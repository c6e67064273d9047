package live

import "net"

// CheckPeer refuses a connection on a Unix socket from another user, as
// the daemon's accept loop does: a server of its own on a socket of the
// runtime directory (a proxy's, internal/attach) checks it on every
// connection.
func CheckPeer(c net.Conn) error { return checkPeer(c) }
