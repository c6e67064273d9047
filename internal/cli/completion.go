package cli

import (
	"os"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/shellcomp"
)

// completionSources are where a shell completion's values come from that
// the command layer knows: its runtime directory and command line,
// $MCPI_SESSION, the configured servers as mcpi servers reads them (its
// warnings unsaid), and the proxies as mcpi proxy list finds them.
func completionSources(f *command.Factory) shellcomp.Sources {
	return shellcomp.Sources{
		RuntimeDir: f.LiveDir(),
		Args:       f.Args,
		EnvSession: os.Getenv(command.SessionEnv),
		Servers:    func(file string) ([]config.Server, error) { return command.LoadServers(file, func(string) {}) },
		Proxies:    proxyNames,
	}
}
