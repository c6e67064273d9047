package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// isLoopback reports whether a host names this machine only.
func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// listen opens a TCP listener for a server the user asked for. With
// loopbackOnly, an address that is not a loopback one is refused (flag
// names the option, for the message).
func listen(addr, flag string, loopbackOnly bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, command.FlagErrorf("invalid %s address %q: %v", flag, addr, err)
	}
	if loopbackOnly && !isLoopback(host) {
		return nil, command.FlagErrorf("%s %s is not a loopback address; mcpi listens on loopback only here", flag, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", command.ErrConnect, err)
	}
	return ln, nil
}

// serveHTTP serves h on ln until ctx is done, then shuts down. On a
// loopback listener, only requests whose Host and Origin name this machine
// are served (DNS rebinding); a listener the user binds elsewhere on
// purpose (demo-server --http) takes any.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler) error {
	if transport.IsLoopbackListener(ln) {
		h = transport.GuardLoopback(h)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return command.ErrSilent{Code: command.ExitOK}
	}
}
