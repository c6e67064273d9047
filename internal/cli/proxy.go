package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/proxy"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// ProxyOptions are the flags of `mcpi proxy`.
type ProxyOptions struct {
	IO       *IOStreams
	Args     []string
	Record   string
	NoRedact bool
	Command  []string
	Env      []string
}

// NewCmdProxy returns `mcpi proxy --record TRACE -- CMD`.
func NewCmdProxy(f *Factory) *cobra.Command {
	opts := &ProxyOptions{IO: f.IO, Args: f.Args}
	cmd := &cobra.Command{
		Use:   "proxy --record TRACE -- CMD [ARGS...]",
		Short: "Record what a real host and a stdio server say to each other",
		Long: `Sit between an MCP host and a stdio server: put "mcpi proxy --record TRACE --"
in front of the server command in the host's configuration. Every byte is
forwarded unchanged in both directions; frames and stderr are recorded in
TRACE; mcpi writes nothing of its own to stdout, and the server's stderr still
reaches the host. mcpi exits with the server's exit status.`,
		Example: `  "command": "mcpi", "args": ["proxy", "--record", "/tmp/host.jsonl", "--", "npx", "-y", "@modelcontextprotocol/server-everything"]`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 || dash == len(args) {
				return flagErrorf("give the server command after \"--\"")
			}
			if dash > 0 {
				return flagErrorf("unexpected argument %q", args[0])
			}
			if opts.Record == "" {
				return flagErrorf("--record TRACE is required")
			}
			opts.Command = args[dash:]
			return proxyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Record, "record", "", "the trace file to write")
	cmd.Flags().BoolVar(&opts.NoRedact, "no-redact", false, "keep secrets in the trace")
	cmd.Flags().StringArrayVarP(&opts.Env, "env", "e", nil, "environment variable KEY=VALUE for the server (repeatable)")
	return cmd
}

func proxyRun(ctx context.Context, opts *ProxyOptions) error {
	var secrets []string
	for _, e := range opts.Env {
		if k, v, ok := strings.Cut(e, "="); ok && record.IsSecretEnv(k, v) {
			secrets = append(secrets, v)
		}
	}
	w, err := record.Create(opts.Record, record.Header{
		Mcpi: Version, Role: record.RoleProxy, Args: opts.Args,
		Target: record.Target{Transport: record.TransportStdio, Command: opts.Command},
	}, record.Options{NoRedact: opts.NoRedact, SecretValues: secrets})
	if err != nil {
		return &FlagError{Err: fmt.Errorf("--record: %w", err)}
	}
	code, err := proxy.RunStdio(ctx, proxy.StdioOptions{
		Command: opts.Command, Env: opts.Env,
		Stdin: opts.IO.In, Stdout: opts.IO.Out, Stderr: opts.IO.ErrOut, Tap: w,
	})
	if cerr := w.Close(); cerr != nil {
		fmt.Fprintf(opts.IO.ErrOut, "mcpi proxy: the trace %s is incomplete: %v\n", opts.Record, cerr)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errConnect, err)
	}
	if code != 0 {
		return errSilent{code: ExitCode(code)}
	}
	return nil
}
