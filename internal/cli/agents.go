package cli

import (
	_ "embed"
	"strings"

	"github.com/spf13/cobra"
)

// agentsGuide is `mcpi help agents`: how a script or a coding agent drives
// mcpi from a shell. TestAgentsGuide checks that the commands it names
// exist and that the --json shapes it promises are what they print.
//
//go:embed agents.txt
var agentsGuide string

// NewCmdAgents returns the help topic `mcpi help agents` (a command that
// runs nothing: cobra lists it under "Additional help topics").
func NewCmdAgents() *cobra.Command {
	return &cobra.Command{
		Use:   "agents",
		Short: "A guide for scripts and coding agents driving mcpi from a shell",
		Long:  strings.TrimRight(agentsGuide, "\n"),
	}
}
