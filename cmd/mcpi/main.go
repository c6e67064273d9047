// Command mcpi inspects and debugs Model Context Protocol servers.
package main

import (
	"os"

	"github.com/mcpi-dev/mcpi/internal/cli"
)

func main() { os.Exit(int(cli.Main())) }
