package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
)

// ServersOptions are the flags of `mcpi servers`.
type ServersOptions struct {
	IO     *command.IOStreams
	Config string
	JSON   bool
}

// NewCmdServers returns `mcpi servers`.
func NewCmdServers(f *command.Factory, runF func(context.Context, *ServersOptions) error) *cobra.Command {
	opts := &ServersOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "servers",
		Short: "List the MCP servers configured on this machine, and where",
		Long: `List the MCP servers found in configuration files: Claude Desktop, Claude Code
(.mcp.json, ~/.claude.json), VS Code (.vscode/mcp.json, user mcp.json), Cursor,
Windsurf and the MCP Inspector's config. Without --config the usual locations
are searched, and the project files of the current directory and its parents.
Use a name with --server NAME in any command.`,
		Args: cobra.NoArgs,
		RunE: command.RunE(opts, runF, serversRun),
	}
	end := command.FlagGroup(cmd, command.GroupArgs)
	cmd.Flags().StringVar(&opts.Config, "config", "", "read only this configuration file")
	end()
	end = command.FlagGroup(cmd, command.GroupOutput)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	end()
	return cmd
}

type serverEntry struct {
	Name      string   `json:"name"`
	Format    string   `json:"format"`
	Transport string   `json:"transport"`
	Command   []string `json:"command,omitempty"`
	URL       string   `json:"url,omitempty"`
	Source    string   `json:"source"`
	Project   string   `json:"project,omitempty"`
	Disabled  bool     `json:"disabled,omitempty"`
	Error     string   `json:"error,omitempty"`
}

func serversRun(_ context.Context, opts *ServersOptions) error {
	servers, err := command.LoadServers(opts.Config, func(s string) { fmt.Fprintln(opts.IO.ErrOut, s) })
	if err != nil {
		return err
	}
	entries := make([]serverEntry, 0, len(servers))
	for _, s := range servers {
		e := serverEntry{Name: s.Name, Format: s.Format, Transport: s.Transport, URL: s.URL, Source: s.Source, Project: s.Project, Disabled: s.Disabled}
		if s.Command != "" {
			e.Command = append([]string{s.Command}, s.Args...)
		}
		if e.Transport == "" {
			e.Transport = "auto"
		}
		if s.Err != nil {
			e.Error = s.Err.Error()
		}
		entries = append(entries, e)
	}
	if opts.JSON {
		return iostreams.WriteJSON(opts.IO, entries)
	}
	if len(entries) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "no MCP servers configured in the usual places; see mcpi servers --help")
		return nil
	}
	tw := mcptext.Table(opts.IO.Out, "NAME", "TRANSPORT", "COMMAND OR URL", "FORMAT", "SOURCE")
	for _, e := range entries {
		what := e.URL
		if e.Command != nil {
			what = strings.Join(e.Command, " ")
		}
		if e.Error != "" {
			what = "error: " + e.Error
		}
		name := e.Name
		if e.Disabled {
			name += " (disabled)"
		}
		mcptext.Row(tw, name, e.Transport, what, e.Format, e.Source)
	}
	return tw.Flush()
}
