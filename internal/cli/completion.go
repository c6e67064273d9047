package cli

import (
	"os"

	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/shellcomp"
)

// completionSources are where a shell completion's values come from that
// the command layer knows: its runtime directory and command line,
// $MCPI_SESSION, the configured servers as mcpi servers reads them (its
// warnings unsaid), and the proxies as mcpi proxy list finds them.
func (f *Factory) completionSources() shellcomp.Sources {
	return shellcomp.Sources{
		RuntimeDir: f.runtimeDir(),
		Args:       f.Args,
		EnvSession: os.Getenv(sessionEnv),
		Servers:    func(file string) ([]config.Server, error) { return loadServers(file, func(string) {}) },
		Proxies:    proxyNames,
	}
}
