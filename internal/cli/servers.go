package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/mcpi-dev/mcpi/internal/answer"
	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// searchOptions are the usual config locations of this machine.
func searchOptions() config.SearchOptions {
	home, _ := os.UserHomeDir()
	cfg, _ := os.UserConfigDir()
	wd, _ := os.Getwd()
	return config.SearchOptions{Home: home, ConfigDir: cfg, WorkDir: wd, Env: os.Getenv}
}

// loadServers reads --config, or searches the usual locations.
func loadServers(file string, warn func(string)) ([]config.Server, error) {
	if file != "" {
		servers, err := config.Load(file)
		if err != nil {
			return nil, &FlagError{Err: err}
		}
		return servers, nil
	}
	servers, problems := config.Search(searchOptions())
	for _, p := range problems {
		warn("warning: " + oneLine(p.String()))
	}
	return servers, nil
}

// resolveServer fills the target from a config entry (--server).
func (r *connRun) resolveServer(ctx context.Context) error {
	t := &r.Target
	if t.Server == "" {
		return nil
	}
	servers, err := loadServers(t.Config, func(s string) { fmt.Fprintln(r.IO.ErrOut, s) })
	if err != nil {
		return err
	}
	s, err := config.Find(servers, t.Server)
	if err != nil {
		return &FlagError{Err: err}
	}
	if s.Disabled {
		fmt.Fprintf(r.IO.ErrOut, "warning: server %s is disabled in %s; using it anyway\n", sanitize(s.Name, false), s.Source)
	}
	resolved, err := r.resolveInputs(ctx, s)
	if err != nil {
		return err
	}
	r.verbose("using server %s from %s (%s)", sanitize(resolved.Name, false), resolved.Source, resolved.Format)
	return t.useServer(resolved)
}

// resolveInputs resolves the entry's variables: ${input:...} from
// --input, or asked on the terminal when there is one, and ${env:...}.
func (o *ConnOptions) resolveInputs(ctx context.Context, s config.Server) (config.Server, error) {
	inputs, err := parsePairs(o.Target.Inputs, "--input")
	if err != nil {
		return config.Server{}, err
	}
	wd, _ := os.Getwd()
	resolved, err := s.Resolve(inputs, os.LookupEnv, wd)
	var missing *config.MissingInputError
	if errors.As(err, &missing) {
		if !o.IO.StdinTTY || !o.IO.StderrTTY {
			return config.Server{}, flagErrorf("%v: pass --input %s=VALUE", err, missing.IDs[0])
		}
		for _, in := range missing.Inputs {
			v, err := o.askInput(ctx, in)
			if err != nil {
				return config.Server{}, err
			}
			inputs[in.ID] = v
		}
		resolved, err = s.Resolve(inputs, os.LookupEnv, wd)
	}
	if err != nil {
		return config.Server{}, &FlagError{Err: err}
	}
	return resolved, nil
}

// useServer makes the resolved entry s the target: its URL, transport,
// headers and OAuth settings, or its command and directory; its
// environment, under the -e values, which win; its secrets.
func (t *TargetOptions) useServer(s config.Server) error {
	if s.URL != "" {
		t.URL = s.URL
		if t.Transport == "auto" || t.Transport == "" {
			switch s.Transport {
			case config.TransportHTTP:
				t.Transport = "http"
			case config.TransportSSE:
				t.Transport = "sse"
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
			t.Headers = append([]string{k + ": " + s.Headers[k]}, t.Headers...)
		}
		if s.OAuth != nil {
			if err := t.Auth.fromConfig(s.OAuth, t); err != nil {
				return &FlagError{Err: fmt.Errorf("server %s in %s: oauth: %w", sanitize(s.Name, false), s.Source, err)}
			}
		}
	} else {
		t.Command = append([]string{s.Command}, s.Args...)
		if t.Dir == "" {
			t.Dir = s.Cwd
		}
	}
	var env []string
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		env = append(env, k+"="+s.Env[k])
	}
	t.Env = append(env, t.Env...) // -e wins
	t.secrets = append(t.secrets, record.ServerSecrets(s)...)
	return nil
}

func (o *ConnOptions) askInput(ctx context.Context, in config.Input) (string, error) {
	label := in.ID
	if in.Description != "" {
		label = in.Description + " (" + in.ID + ")"
	}
	if in.Default != "" && !in.Password {
		label += " [" + in.Default + "]"
	}
	fmt.Fprintf(o.IO.ErrOut, "%s: ", sanitize(label, false))
	if in.Password {
		if f, ok := o.IO.In.(*os.File); ok {
			b, err := term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(o.IO.ErrOut)
			if err != nil {
				return "", err
			}
			return string(b), nil
		}
	}
	v, err := answer.NewTerminal(o.IO).Ask(ctx, "")
	if err != nil {
		return "", err
	}
	if v == "" {
		v = in.Default
	}
	return v, nil
}

// ServersOptions are the flags of `mcpi servers`.
type ServersOptions struct {
	IO     *IOStreams
	Config string
	JSON   bool
}

// NewCmdServers returns `mcpi servers`.
func NewCmdServers(f *Factory, runF func(context.Context, *ServersOptions) error) *cobra.Command {
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
		RunE: runE(opts, runF, serversRun),
	}
	end := flagGroup(cmd, groupArgs)
	cmd.Flags().StringVar(&opts.Config, "config", "", "read only this configuration file")
	end()
	end = flagGroup(cmd, groupOutput)
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
	servers, err := loadServers(opts.Config, func(s string) { fmt.Fprintln(opts.IO.ErrOut, s) })
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
