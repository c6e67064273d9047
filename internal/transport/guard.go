package transport

import (
	"net"
	"net/http"
	"net/url"
)

// GuardLoopback serves next only to requests that name this machine: the
// Host must be a loopback name (localhost, a .localhost name, 127.0.0.1,
// [::1]) and an Origin, when there is one, a loopback origin. Anything
// else is answered 403, as the official SDK's servers answer. A web page
// the user visits can send requests to a loopback port, and DNS rebinding
// gives it a name of its own that resolves there: its Host or its Origin
// gives it away. Listeners on loopback use it; a server the user binds
// elsewhere on purpose does not.
func GuardLoopback(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if !IsLoopbackHost(host) {
			http.Error(w, "mcpi: forbidden: the Host header must name this machine (localhost, 127.0.0.1, [::1])", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !IsLoopbackHost(u.Hostname()) {
				http.Error(w, "mcpi: forbidden: requests from another origin than this machine are refused", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// IsLoopbackListener reports whether a listener's address is a loopback one.
func IsLoopbackListener(ln net.Listener) bool {
	a, ok := ln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}
