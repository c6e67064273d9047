package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/proxy"
	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ProxyOptions are the flags of `mcpi proxy`.
type ProxyOptions struct {
	IO       *IOStreams
	Args     []string
	Record   string
	NoRedact bool
	Command  []string
	Env      []string
	Listen   string
	URL      string
	// Faults is the faults file (internal/intercept); Seed its draws'
	// seed, chosen at random when SeedSet is false.
	Faults  string
	Seed    uint64
	SeedSet bool

	engine *intercept.Engine
}

// NewCmdProxy returns `mcpi proxy --record TRACE -- CMD`.
func NewCmdProxy(f *Factory, runF func(context.Context, *ProxyOptions) error) *cobra.Command {
	opts := &ProxyOptions{IO: f.IO, Args: f.Args}
	cmd := &cobra.Command{
		Use:   "proxy --record TRACE (-- CMD [ARGS...] | --listen ADDR --url UPSTREAM)",
		Short: "Record what a real host and a server say to each other",
		Long: `Sit between an MCP host and a stdio server: put "mcpi proxy --record TRACE --"
in front of the server command in the host's configuration. Every byte is
forwarded unchanged in both directions; frames and stderr are recorded in
TRACE; mcpi writes nothing of its own to stdout, and the server's stderr still
reaches the host. mcpi exits with the server's exit status.

With --listen ADDR --url UPSTREAM, mcpi is a reverse proxy for a Streamable HTTP
(or HTTP+SSE) server instead: point the host at http://ADDR/ (ADDR on
loopback); requests and answers, SSE streams included, are forwarded unchanged
as they flow, and recorded with their HTTP metadata.

With --faults FILE, frames are judged by the rules of FILE on their way
(docs/intercept.md): delayed, dropped, answered with an error, corrupted,
duplicated, reordered, slowed, the connection closed or cut, an HTTP status
given in the server's place. Each change is an intercept event in TRACE, and
a summary on stderr at the end says which rule fired how often and the seed
that repeats the run (--seed).`,
		Example: `  "command": "mcpi", "args": ["proxy", "--record", "/tmp/host.jsonl", "--", "npx", "-y", "@modelcontextprotocol/server-everything"]`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.parse(cmd, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return proxyRun(cmd.Context(), opts)
		},
	}
	end := flagGroup(cmd, groupOutput)
	cmd.Flags().StringVar(&opts.Record, "record", "", "the trace file to write")
	cmd.Flags().BoolVar(&opts.NoRedact, "no-redact", false, "keep secrets in the trace")
	end()
	end = flagGroup(cmd, groupServe)
	cmd.Flags().StringVar(&opts.Faults, "faults", "", "change frames on the wire by the rules of this YAML file (docs/intercept.md)")
	cmd.Flags().Uint64Var(&opts.Seed, "seed", 0, "the seed of --faults' draws: the same seed repeats a run (default: a new one, printed)")
	end()
	end = flagGroup(cmd, groupConnection)
	cmd.Flags().StringArrayVarP(&opts.Env, "env", "e", nil, "environment variable KEY=VALUE for the server (repeatable)")
	end()
	end = flagGroup(cmd, groupServe)
	cmd.Flags().StringVar(&opts.Listen, "listen", "", "HTTP proxy: the loopback address to listen on, e.g. 127.0.0.1:8080")
	end()
	end = flagGroup(cmd, groupConnection)
	cmd.Flags().StringVar(&opts.URL, "url", "", "HTTP proxy: the upstream server's URL")
	end()
	return cmd
}

// parse checks the flags, and takes the server command after "--" (a
// stdio proxy) or none (an HTTP proxy: --listen and --url).
func (opts *ProxyOptions) parse(cmd *cobra.Command, args []string) error {
	if opts.Record == "" {
		return flagErrorf("--record TRACE is required")
	}
	opts.SeedSet = cmd.Flags().Changed("seed")
	if opts.SeedSet && opts.Faults == "" {
		return flagErrorf("--seed goes with --faults")
	}
	if opts.Listen != "" || opts.URL != "" {
		if opts.Listen == "" || opts.URL == "" {
			return flagErrorf("--listen and --url go together")
		}
		if len(args) > 0 {
			return flagErrorf("unexpected argument %q: an HTTP proxy runs no command", args[0])
		}
		return nil
	}
	dash := cmd.ArgsLenAtDash()
	if dash < 0 || dash == len(args) {
		return flagErrorf("give the server command after \"--\", or --listen and --url")
	}
	if dash > 0 {
		return flagErrorf("unexpected argument %q", args[0])
	}
	opts.Command = args[dash:]
	return nil
}

func proxyRun(ctx context.Context, opts *ProxyOptions) error {
	var faults *intercept.Faults
	if opts.Faults != "" {
		var err error
		if faults, err = intercept.ReadFaults(opts.Faults); err != nil {
			return &FlagError{Err: fmt.Errorf("--faults: %w", err)}
		}
		if !opts.SeedSet {
			opts.Seed = rand.Uint64()
		}
	}
	start := func(tap transport.Tap) {
		if faults != nil {
			opts.engine = intercept.NewEngine(intercept.Options{Faults: faults, Seed: opts.Seed, Tap: tap})
		}
	}
	var err error
	if opts.Listen != "" {
		err = proxyHTTPRun(ctx, opts, start)
	} else {
		err = proxyStdioRun(ctx, opts, start)
	}
	if opts.engine != nil {
		opts.engine.WriteSummary(opts.IO.ErrOut)
	}
	return err
}

func proxyStdioRun(ctx context.Context, opts *ProxyOptions, start func(transport.Tap)) error {
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
	start(w)
	code, err := proxy.RunStdio(ctx, proxy.StdioOptions{
		Command: opts.Command, Env: opts.Env,
		Stdin: opts.IO.In, Stdout: opts.IO.Data(), Stderr: opts.IO.ErrOut, Tap: w, Faults: opts.engine,
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

func proxyHTTPRun(ctx context.Context, opts *ProxyOptions, start func(transport.Tap)) error {
	up, err := url.Parse(opts.URL)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return flagErrorf("invalid --url %q", opts.URL)
	}
	ln, err := listen(opts.Listen, "--listen", true)
	if err != nil {
		return err
	}
	defer ln.Close()
	w, err := record.Create(opts.Record, record.Header{
		Mcpi: Version, Role: record.RoleProxy, Args: opts.Args,
		Target: record.Target{Transport: record.TransportHTTP, URL: opts.URL},
	}, record.Options{NoRedact: opts.NoRedact})
	if err != nil {
		return &FlagError{Err: fmt.Errorf("--record: %w", err)}
	}
	defer w.Close()
	start(w)
	fmt.Fprintf(opts.IO.ErrOut, "mcpi proxy: http://%s/ -> %s, recording to %s\n", ln.Addr(), opts.URL, opts.Record)
	return serveHTTP(ctx, ln, proxy.HandlerWith(up, proxy.HTTPOptions{Tap: w, Faults: opts.engine}))
}
